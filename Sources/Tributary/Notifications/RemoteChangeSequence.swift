import Foundation

/// The commits to a coordinator's store, as an `AsyncSequence` of ``RemoteChange``
/// (Core Data's remote change notifications, without `NotificationCenter`).
///
/// Listening starts when iteration starts (``makeAsyncIterator()``) and every commit
/// after that is reported, by this coordinator, another coordinator in the process or
/// another process. At most one change waits unread: a burst coalesces into its newest
/// change. Changes come in token order; a commit may be reported twice. Cancelling the
/// iterating task, or dropping the iterator, stops listening. The iterations of one store
/// in a process share one listening thread, released a second
/// after the last of them stops. A coordinator without a store gives an empty sequence.
///
/// Commits by other Tributary coordinators wake listeners at once only when those
/// coordinators set ``PersistentStoreDescription/remoteChangeNotificationPost``; set it
/// on every coordinator of the store. Commits by other programs are seen through the
/// store's `-wal` file.
///
/// ```swift
/// let task = Task {
///     for await change in coordinator.remoteChanges {
///         let new = try coordinator.fetchHistory(.fetchHistory(after: lastToken))
///         lastToken = change.historyToken ?? lastToken
///     }
/// }
/// task.cancel()  // stops listening
/// ```
public struct RemoteChangeSequence: AsyncSequence, Sendable {
    public typealias Element = RemoteChange
    public typealias Failure = Never

    let coordinator: PersistentStoreCoordinator

    /// Starts listening.
    public func makeAsyncIterator() -> Iterator {
        let (stream, continuation) = AsyncStream.makeStream(of: RemoteChange.self, bufferingPolicy: .bufferingNewest(1))
        guard let store = try? coordinator.requireStore() else {
            continuation.finish()
            return Iterator(base: stream.makeAsyncIterator())
        }
        let target = StoreChangeMonitor.Target(databasePath: store.database.path, isInMemory: store.database.isInMemory, storeURL: store.url,
                                               storeID: store.identifier, isHistoryTracked: store.isHistoryTracked, busyTimeout: store.database.busyTimeout)
        let subscription = SharedStoreMonitor.subscribe(target, deliver: { continuation.yield($0) }, finish: { continuation.finish() })
        continuation.onTermination = { _ in subscription.cancel() }
        return Iterator(base: stream.makeAsyncIterator())
    }

    /// Waits for the next change; nil once listening stopped.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncStream<RemoteChange>.Iterator

        /// The next change, or nil when the task is cancelled.
        public mutating func next() async -> RemoteChange? {
            await base.next()
        }
    }
}

extension PersistentStoreCoordinator {
    /// Every commit to the store from now on, by any coordinator or process; see ``RemoteChangeSequence``.
    ///
    /// ```swift
    /// for await change in coordinator.remoteChanges { print(change.historyToken as Any) }
    /// ```
    public var remoteChanges: RemoteChangeSequence { RemoteChangeSequence(coordinator: self) }
}
