import Foundation

/// A commit to a store by any coordinator or process, seen by a listening coordinator
/// (the payload of Core Data's `NSPersistentStoreRemoteChange` notification).
///
/// Deliveries coalesce under load, so one `RemoteChange` may stand for many commits;
/// the last one of a burst always carries the newest token. Fetch history after your
/// own checkpoint rather than counting notifications.
///
/// ```swift
/// for await change in coordinator.remoteChanges {
///     print(change.storeURL.path, change.historyToken?.description ?? "no history")
/// }
/// ```
public struct RemoteChange: Sendable, Equatable {
    /// The store that changed.
    public let storeURL: URL
    /// The store's newest history token when the change was seen; nil when the store
    /// does not track history.
    public let historyToken: PersistentHistoryToken?

    /// A change of the store at `storeURL`, at `historyToken`.
    public init(storeURL: URL, historyToken: PersistentHistoryToken?) {
        self.storeURL = storeURL
        self.historyToken = historyToken
    }
}
