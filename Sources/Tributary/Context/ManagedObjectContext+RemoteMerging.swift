import Foundation

extension ManagedObjectContext {
    /// Starts following other coordinators' and processes' commits (under the lock),
    /// when the store takes part in remote change notifications. Listening starts
    /// before this returns, and history is read after the token current now, so no
    /// commit after the context first used the store is missed.
    func startRemoteMerging(_ store: PersistentStore) {
        guard remoteMerging == nil, store.description.remoteChangeNotificationPost else { return }
        let coordinator = persistentStoreCoordinator
        var changes = coordinator.remoteChanges.makeAsyncIterator()
        var configuration = HistoryWatcher.Configuration()
        configuration.startToken = store.isHistoryTracked ? try? coordinator.currentPersistentHistoryToken() : nil
        let watcher = store.isHistoryTracked ? try? HistoryWatcher(coordinator: coordinator, configuration: configuration) : nil
        remoteMerging = Task.detached { [weak self] in
            repeat {
                guard let context = self else { return }
                guard let watcher else {
                    // No history: a remote commit refreshes every object.
                    context.withLock {
                        context.generation.advanceAfterSave()
                        context.refreshAllObjects()
                    }
                    continue
                }
                do {
                    try await watcher.deliverPending { batch in
                        context.mergeChanges(fromContextDidSave: ContextDidSave(transactions: batch))
                    }
                } catch {
                    // A failed read (a busy store) is tried again at the next change or after a pause.
                    if Task.isCancelled { return }
                    try? await Task.sleep(for: .milliseconds(100))
                }
            } while await changes.next() != nil
        }
    }

    func stopRemoteMerging() {
        remoteMerging?.cancel()
        remoteMerging = nil
    }
}
