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
        var changes = coordinator.remoteChanges.makeAsyncIterator()
        let local = coordinator.localCommits
        let follower = store.isHistoryTracked ? local.follow() : nil   // before the start token is read
        var configuration = HistoryWatcher.Configuration()
        configuration.startToken = store.isHistoryTracked ? try? coordinator.currentPersistentHistoryToken() : nil
        let watcher = store.isHistoryTracked ? try? HistoryWatcher(coordinator: coordinator, configuration: configuration) : nil
        if let follower, let watcher { local.passed(follower, through: watcher.checkpoint.value) }
        remoteMerging = Task.detached { [weak self] in
            defer { if let follower { local.unfollow(follower) } }
            repeat {
                guard let context = self else { return }
                guard let watcher else {
                    // No history: a remote commit refreshes every object.
                    await context.onQueue {
                        context.withLock {
                            context.generation.advanceAfterSave()
                            context.refreshAllObjects()
                        }
                    }
                    continue
                }
                // A failed read (a busy store, no free reader) is tried again after a backoff,
                // without waiting for another change: the change in hand is not lost.
                var failures = 0
                while !Task.isCancelled {
                    do {
                        try await watcher.deliverPending { batch in
                            let remote = batch.filter { !local.contains($0.token.value) }
                            if !remote.isEmpty {
                                let changes = ContextDidSave(transactions: remote)
                                await context.onQueue { context.mergeChanges(fromContextDidSave: changes) }
                            }
                            if let follower, let last = batch.last { local.passed(follower, through: last.token.value) }
                        }
                        if let follower { local.passed(follower, through: watcher.checkpoint.value) }
                        break
                    } catch {
                        failures += 1
                        try? await Task.sleep(for: watcher.configuration.backoff.delay(afterFailures: failures))
                    }
                }
                if Task.isCancelled { return }
            } while await changes.next() != nil
        }
    }

    func stopRemoteMerging() {
        remoteMerging?.cancel()
        remoteMerging = nil
    }
}
