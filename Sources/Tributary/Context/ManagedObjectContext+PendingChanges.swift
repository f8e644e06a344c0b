extension ManagedObjectContext {
    /// The unsaved objects of `layout`'s entity a fetch with `includesPendingChanges` must
    /// look at (under the lock); empty when the request does not ask or nothing is pending.
    func pendingObjects(for request: FetchRequest, layout: ContextEntity) throws -> [ManagedObject] {
        guard request.includesPendingChanges else { return [] }
        let pending = dirtyObjects.filter { $0.layout.index == layout.index }
        guard !pending.isEmpty else { return [] }
        try request.predicate?.checkEvaluable()
        for descriptor in request.sortDescriptors where layout.slotIndex[descriptor.key] == nil {
            throw TributaryError(.invalidInput, "with unsaved changes, a fetch including them sorts by attributes of \(layout.name) only, not '\(descriptor.key)'",
                                 location: request.entityName, hint: "save first, or sort by an attribute name")
        }
        return pending
    }

    /// `objects` (read from the store, without limit or offset) with the unsaved changes of
    /// `pending` applied: changed objects that no longer match leave, inserted and changed
    /// ones that match join; then the request's order, offset and limit.
    func applying(_ pending: [ManagedObject], to objects: [ManagedObject], request: FetchRequest, layout: ContextEntity) throws -> [ManagedObject] {
        func matches(_ object: ManagedObject) throws -> Bool {
            guard let predicate = request.predicate else { return true }
            try object.fireIfNeeded()
            return try predicate.evaluate(Dictionary(uniqueKeysWithValues: zip(layout.slotNames, object.values)))
        }
        let dirty = Set(pending.map(ObjectIdentifier.init))
        var result: [ManagedObject] = []
        for object in objects where !dirty.contains(ObjectIdentifier(object)) {
            result.append(object)
        }
        // Each unsaved object (inserted, or changed whether or not the store's row matched) is judged by its values now.
        for object in pending where !object.isDeletedState {
            if try matches(object) { result.append(object) }
        }
        for object in result { try object.fireIfNeeded() }
        let slots = request.sortDescriptors.map { (layout.slotIndex[$0.key] ?? 0, $0.ascending) }
        // Saved objects by key, then unsaved ones in the order they were inserted (their temporary keys count down).
        func rank(_ object: ManagedObject) -> (Int, Int64) { object.id.primaryKey > 0 ? (0, object.id.primaryKey) : (1, -object.id.primaryKey) }
        result.sort { a, b in
            for (slot, ascending) in slots where slot < a.values.count && slot < b.values.count {
                let order = SQLiteOrder.compare(a.values[slot], b.values[slot])
                if order != 0 { return ascending ? order < 0 : order > 0 }
            }
            return rank(a) < rank(b)
        }
        let start = min(request.fetchOffset, result.count)
        let end = request.fetchLimit > 0 ? min(start + request.fetchLimit, result.count) : result.count
        return Array(result[start..<end])
    }
}
