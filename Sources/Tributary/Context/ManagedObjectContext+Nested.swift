extension ManagedObjectContext {
    /// A child's save: its changes become the parent's unsaved changes.
    func saveIntoParent(_ parent: ManagedObjectContext) throws -> ContextDidSave {
        var notification = ContextDidSave()
        let objects = dirtyObjects
        try parent.withLock {
            _ = try parent.requireStore()
            for object in objects {
                let layout = object.layout
                if object.isDeletedState {
                    guard !object.isInsertedState else { continue }
                    let target = try parent.registeredOrFault(object.id)
                    parent.markDeleted(target)
                    notification.deletedObjectIDs.insert(object.id)
                    continue
                }
                let target: ManagedObject
                if object.isInsertedState {
                    if let existing = parent.registry[layout.index][object.id.primaryKey] {
                        target = existing
                    } else {
                        target = parent.makeObject(layout, id: object.id)
                        target.values = layout.defaults
                        target.isFaultState = false
                        target.isInsertedState = true
                        parent.register(target)
                    }
                    notification.insertedObjectIDs.insert(object.id)
                } else {
                    target = try parent.registeredOrFault(object.id)
                    try target.fireIfNeeded()
                    notification.updatedObjectIDs.insert(object.id)
                }
                for slot in 0..<layout.slotNames.count where object.changedSlots & (1 << UInt64(slot)) != 0 {
                    target.values[slot] = object.values[slot]
                    target.changedSlots |= 1 << UInt64(slot)
                }
                for (link, state) in object.linkStates.enumerated() {
                    guard let state, state.hasChanges else { continue }
                    if target.linkStates.isEmpty { target.linkStates = Array(repeating: nil, count: layout.links.count) }
                    var parentState = target.linkStates[link] ?? LinkState()
                    for id in state.removed { parentState.remove(id) }
                    for id in state.added { parentState.add(id) }
                    target.linkStates[link] = parentState
                }
                parent.markDirty(target)
            }
        }
        for object in objects {
            if object.isDeletedState {
                unregister(object)
                object.context = nil
                continue
            }
            object.snapshot = object.values
            object.changedSlots = 0
            object.isInsertedState = false
            object.linkStates = object.linkStates.map { state in
                guard let state else { return nil }
                return LinkState(base: state.current)
            }
        }
        clearDirty()
        return notification
    }
}
