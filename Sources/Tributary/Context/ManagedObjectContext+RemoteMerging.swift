import Foundation

extension ManagedObjectContext {
    /// Starts following other coordinators' and processes' commits (under the lock),
    /// when the store takes part in remote change notifications. Listening starts
    /// before this returns, and history is read after the token current now, so no
    /// commit after the context first used the store is missed. Every merge runs on
    /// the context's queue; saves by contexts of this coordinator, which reach this
    /// context directly, are skipped (``LocalCommits``).
    func startRemoteMerging(_ store: PersistentStore) {
        guard remoteMerging == nil, store.description.remoteChangeNotificationPost else { return }
        let coordinator = persistentStoreCoordinator
        let local = coordinator.localCommits
        let follower = store.isHistoryTracked ? local.follow() : nil   // before the start token is read
        var configuration = HistoryWatcher.Configuration()
        configuration.startToken = store.isHistoryTracked ? try? coordinator.currentPersistentHistoryToken() : nil
        let watcher = store.isHistoryTracked ? try? HistoryWatcher(coordinator: coordinator, configuration: configuration) : nil
        if let follower, let watcher { local.passed(follower, through: watcher.checkpoint.value) }
        guard let watcher else {
            // No history: a remote commit refreshes every object.
            var changes = coordinator.remoteChanges.makeAsyncIterator()
            remoteMerging = Task.detached { [weak self] in
                repeat {
                    guard let context = self else { return }
                    await context.onQueue {
                        context.withLock {
                            context.generation.advanceAfterSave()
                            context.refreshAllObjects()
                        }
                    }
                } while await changes.next() != nil
            }
            return
        }
        // The watcher's loop: pending history first, then after each remote change; a
        // failed read (a busy store, no free reader) is retried after its backoff. The
        // context is held only while a batch is merged, so it can go away meanwhile.
        remoteMerging = Task.detached { [weak self] in
            defer { if let follower { local.unfollow(follower) } }
            await watcher.run(reporting: { event in
                if case .delivered(_, let through) = event, let follower { local.passed(follower, through: through.value) }
            }) { [weak self] batch in
                guard let context = self else { throw CancellationError() }
                let remote = batch.filter { !local.contains($0.token.value) }
                if !remote.isEmpty {
                    let changes = ContextDidSave(transactions: remote)
                    await context.onQueue { context.mergeChanges(fromContextDidSave: changes) }
                }
                if let follower, let last = batch.last { local.passed(follower, through: last.token.value) }
            }
        }
    }

    func stopRemoteMerging() {
        remoteMerging?.cancel()
        remoteMerging = nil
    }
}
