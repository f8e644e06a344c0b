import Foundation

extension ManagedObjectContext {
    // MARK: Undoing and refreshing

    /// Drops every unsaved change: inserted objects leave the context, updated
    /// and deleted ones get their last read values back.
    ///
    /// ```swift
    /// post["title"] = "Draft"
    /// context.rollback()        // post["title"] is what was saved
    /// ```
    public func rollback() {
        withLock {
            for object in dirtyObjects {
                if object.isInsertedState {
                    unregister(object)
                    object.context = nil
                    continue
                }
                object.isDeletedState = false
                if !object.isFaultState { object.values = object.snapshot }
                object.changedSlots = 0
                object.linkStates = []
            }
            clearDirty()
        }
    }

    /// Forgets every object (they leave the context) and unsaved change, and moves
    /// a pinned context to the newest generation.
    public func reset() {
        withLock {
            for entity in registry {
                for object in entity.values { object.context = nil }
            }
            registry = registry.map { _ in [:] }
            clearDirty()
            generation.advanceAfterSave()
        }
    }

    /// Brings `object` up to date. With `mergeChanges` false, its unsaved changes
    /// are dropped and it becomes a fault that reloads when next read; with true,
    /// it reloads now and keeps its unsaved changes over the new values.
    ///
    /// ```swift
    /// context.refresh(post, mergeChanges: true)
    /// ```
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) {
        withLock {
            guard object.context === self, !object.isInsertedState else { return }
            if !mergeChanges || !object.hasLocalChanges {
                if mergeChanges == false, object.isDeletedState, object.isInDirtyList { object.isDeletedState = false }
                turnIntoFault(object)
                return
            }
            let changed = object.changedSlots
            let current = object.values
            let links = object.linkStates
            let keep = deleteInaccessibleValue
            object.isFaultState = true
            do {
                deleteInaccessibleValue = true
                defer { deleteInaccessibleValue = keep }
                try fireFault(object)
            } catch {
                object.isFaultState = false
            }
            if object.isDeletedState { return }
            for slot in 0..<current.count where changed & (1 << UInt64(slot)) != 0 { object.values[slot] = current[slot] }
            object.changedSlots = changed
            object.linkStates = links.map { state in
                guard var state else { return nil }
                state.base = nil
                return state
            }
        }
    }

    /// Refreshes every registered object, keeping unsaved changes (object references stay valid).
    public func refreshAllObjects() {
        withLock {
            for entity in registry {
                for object in entity.values { refresh(object, mergeChanges: true) }
            }
        }
    }

    private func turnIntoFault(_ object: ManagedObject) {
        object.values = []
        object.snapshot = []
        object.changedSlots = 0
        object.linkStates = []
        object.isFaultState = true
        removeFromDirty(object)
    }

    // MARK: Merging

    /// Brings the context up to date with another context's save (or with history
    /// from elsewhere): updated objects it holds are refreshed, keeping its unsaved
    /// changes; deleted ones leave it, marked deleted; inserted ones become
    /// fetchable. A pinned context moves to the newest generation first. A main-queue
    /// context merges on the main queue (waiting for it when called elsewhere), so its
    /// fetched results controllers hear of the merge there.
    ///
    /// ```swift
    /// for await saved in backgroundContext.didSaveNotifications() {
    ///     viewContext.mergeChanges(fromContextDidSave: saved)
    /// }
    /// ```
    public func mergeChanges(fromContextDidSave notification: ContextDidSave) {
        if concurrencyType == .mainQueue && !isOnQueue {
            // A main-queue context's observers and controllers hear of merges on the main queue.
            DispatchQueue.main.sync { mergeChanges(fromContextDidSave: notification) }
            return
        }
        let forward: [ManagedObjectContext] = withLock {
            guard (try? requireStore()) != nil else { return [] }
            if parent == nil { generation.advanceAfterSave() }
            adoptPermanentIDs(notification.permanentIDs)
            for id in notification.deletedObjectIDs {
                guard let object = registeredObject(for: id) else { continue }
                object.isDeletedState = true
                unregister(object)
                removeFromDirty(object)
                object.context = nil
            }
            for id in notification.updatedObjectIDs {
                if let object = registeredObject(for: id) { refresh(object, mergeChanges: true) }
            }
            invalidateLinks()
            for observer in changeObservers.values { observer(notification) }
            return children.compactMap(\.context)
        }
        for child in forward where child.automaticallyMergesChangesFromParent {
            child.queue.async { child.mergeChanges(fromContextDidSave: notification) }
        }
    }

    /// Merges the changes of saves made elsewhere (another coordinator or
    /// process, as read from history) into `contexts` (Core Data's
    /// `mergeChanges(fromRemoteContextSave:into:)`).
    ///
    /// ```swift
    /// let transactions = try coordinator.fetchHistory(.fetchHistory(after: lastToken))
    /// ManagedObjectContext.mergeChanges(fromRemoteContextSave: ContextDidSave(transactions: transactions), into: [viewContext])
    /// ```
    ///
    /// Each merge runs on its context's queue (at once when the caller is on it, otherwise
    /// waiting for it), so a fetched results controller's delegate hears of it there.
    public static func mergeChanges(fromRemoteContextSave changes: ContextDidSave, into contexts: [ManagedObjectContext]) {
        for context in contexts { context.runOnQueueAndWait { context.mergeChanges(fromContextDidSave: changes) } }
    }

    /// Merges object IDs by change type, the form of ``PersistentHistoryTransaction/objectIDNotification``
    /// (and of a batch's, `batch.objectIDNotification`), into `contexts`, each on its queue.
    ///
    /// ```swift
    /// for transaction in try coordinator.fetchHistory(.fetchHistory(after: token)) {
    ///     ManagedObjectContext.mergeChanges(fromRemoteContextSave: transaction.objectIDNotification, into: [viewContext])
    /// }
    /// ```
    public static func mergeChanges(fromRemoteContextSave changes: [PersistentHistoryChangeType: Set<ObjectID>], into contexts: [ManagedObjectContext]) {
        mergeChanges(fromRemoteContextSave: ContextDidSave(objectIDNotification: changes), into: contexts)
    }

    /// A stream of this context's saves; it ends when the context is gone.
    ///
    /// ```swift
    /// Task { for await saved in context.didSaveNotifications() { print(saved.insertedObjectIDs.count) } }
    /// ```
    public func didSaveNotifications() -> AsyncStream<ContextDidSave> {
        let (stream, continuation) = AsyncStream<ContextDidSave>.makeStream()
        let key = UUID()
        withLock { didSaveContinuations[key] = continuation }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            self.withLock { _ = self.didSaveContinuations.removeValue(forKey: key) }
        }
        return stream
    }

    /// Tells observers, and merges into the contexts that merge automatically.
    func didSave(_ notification: ContextDidSave) {
        let (observers, kids) = withLock { (Array(didSaveContinuations.values), children.compactMap(\.context)) }
        let tell = { self.withLock { for observer in self.changeObservers.values { observer(notification) } } }
        if concurrencyType == .mainQueue { runOnQueueAndWait(tell) } else { tell() }   // a view context's controllers hear on the main queue
        for observer in observers { observer.yield(notification) }
        if let parent {
            let siblings = parent.withLock { parent.children.compactMap(\.context) }
            for sibling in siblings where sibling !== self && sibling.automaticallyMergesChangesFromParent {
                sibling.queue.async { sibling.mergeChanges(fromContextDidSave: notification) }
            }
            return
        }
        for child in kids {
            if child.automaticallyMergesChangesFromParent {
                child.queue.async { child.mergeChanges(fromContextDidSave: notification) }
            } else if !notification.permanentIDs.isEmpty {
                child.queue.async { child.withLock { child.adoptPermanentIDs(notification.permanentIDs) } }
            }
        }
        for other in persistentStoreCoordinator.contexts.all where other !== self && other.parent == nil && other.automaticallyMergesChangesFromParent {
            other.queue.async { other.mergeChanges(fromContextDidSave: notification) }
        }
    }

    /// Gives objects known by temporary IDs the permanent IDs their parent's save assigned.
    func adoptPermanentIDs(_ permanent: [ObjectID: ObjectID]) {
        guard !permanent.isEmpty else { return }
        func remap(_ value: AttributeValue) -> AttributeValue {
            if case .objectID(let id) = value, let mapped = permanent[id] { return .objectID(mapped) }
            return value
        }
        func remap(_ ids: Set<ObjectID>) -> Set<ObjectID> { Set(ids.map { permanent[$0] ?? $0 }) }
        for entity in registry {
            for object in entity.values {
                if let mapped = permanent[object.id] {
                    unregister(object)
                    object.id = mapped
                    register(object)
                }
                if !object.isFaultState {
                    object.values = object.values.map(remap)
                    object.snapshot = object.snapshot.map(remap)
                }
                object.linkStates = object.linkStates.map { state in
                    guard var state else { return nil }
                    state.base = state.base.map(remap)
                    state.added = remap(state.added)
                    state.removed = remap(state.removed)
                    return state
                }
            }
        }
    }
}
