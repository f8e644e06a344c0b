/// The one commit waiter: it listens to the store's remote changes from the moment it is
/// made, so a commit between making it and looking at the store is not missed. Followers
/// make it before they read, then wait after reading (``HistoryFollower``).
///
/// ```swift
/// var waiter = CommitWaiter(coordinator)
/// let head = try follower.head()
/// deliver(try follower.readChanges(after: after, through: head) { … })
/// let next = try await waiter.waitForCommit(after: head)   // throws CancellationError when cancelled
/// ```
package struct CommitWaiter {
    private let coordinator: PersistentStoreCoordinator
    private var changes: RemoteChangeSequence.Iterator

    /// Starts listening to `coordinator`'s store.
    package init(_ coordinator: PersistentStoreCoordinator) {
        self.coordinator = coordinator
        changes = coordinator.remoteChanges.makeAsyncIterator()
    }

    /// Waits until the store's history has a commit after `token`, and returns its new
    /// head, or a head before `token` at once: the store was replaced by an older copy, which
    /// the caller's next read (``HistoryFollower/head(after:deliveredBy:)``) says, rather than wait for it
    /// to number transactions past `token` and skip those before. Throws `CancellationError`
    /// once the task is cancelled.
    package mutating func waitForCommit(after token: PersistentHistoryToken) async throws -> PersistentHistoryToken {
        while true {
            let current = try coordinator.currentPersistentHistoryToken()
            if current != token { return current }
            guard await changes.next() != nil else { throw CancellationError() }
        }
    }

    /// The next commit to the store, history or not; nil once the task is cancelled.
    package mutating func nextChange() async -> RemoteChange? {
        await changes.next()
    }
}
