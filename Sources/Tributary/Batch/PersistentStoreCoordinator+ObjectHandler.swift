extension PersistentStoreCoordinator {
    /// Runs a batch insert whose objects `managedObjectHandler` fills in, one per call, in one
    /// transaction (Core Data's `NSBatchInsertRequest(entity:managedObjectHandler:)`): the
    /// handler sets the values of the object it is given and returns false, or returns true
    /// when there are no more objects (that call's object is not inserted). The object is of
    /// the entity's class, so typed `@Managed` properties work; it belongs to no context you
    /// hold and is let go after the call. Only the values the handler sets are written (the
    /// rest take their defaults; a row matching a unique constraint keeps its other values),
    /// through the same streamed path as ``execute(_:dictionaryHandler:)``. Attributes and
    /// to-one relationships held in the row can be set; setting another relationship throws.
    ///
    /// ```swift
    /// var feed = quakes.makeIterator()
    /// try coordinator.execute(BatchInsertRequest(entityName: "Quake", objects: []), managedObjectHandler: { (quake: Quake) in
    ///     guard let next = feed.next() else { return true }
    ///     quake.code = next.code
    ///     quake.magnitude = next.magnitude
    ///     return false
    /// })
    /// ```
    @discardableResult
    public func execute<T: EntityNamed>(_ request: BatchInsertRequest, managedObjectHandler: (T) throws -> Bool) throws -> BatchResult {
        guard request.entityName == T.entityName else {
            throw TributaryError(.invalidInput, "the batch insert is into \(request.entityName), and the handler takes \(T.self) objects of \(T.entityName)", location: request.entityName,
                                 hint: "make the request for \(T.entityName), or take ManagedObject in the handler")
        }
        return try insertObjects(request, subclass: T.self) { object, scratch in try managedObjectHandler(try scratch.cast(object, to: T.self)) }
    }

    /// Runs a batch insert whose objects `managedObjectHandler` fills in by key (see the
    /// typed `execute(_:managedObjectHandler:)` above).
    ///
    /// ```swift
    /// var index = 0
    /// try coordinator.execute(BatchInsertRequest(entityName: "Tag", objects: []), managedObjectHandler: { (tag: ManagedObject) in
    ///     guard index < names.count else { return true }
    ///     try tag.setValue(.string(names[index]), forKey: "name")
    ///     index += 1
    ///     return false
    /// })
    /// ```
    @discardableResult
    public func execute(_ request: BatchInsertRequest, managedObjectHandler: (ManagedObject) throws -> Bool) throws -> BatchResult {
        try insertObjects(request, subclass: nil) { object, _ in try managedObjectHandler(object) }
    }

    /// Feeds the dictionary handler's path with the values set on a fresh object per call,
    /// made by a context that serves only this insert.
    private func insertObjects(_ request: BatchInsertRequest, subclass: (any EntityNamed.Type)?,
                               _ handler: (ManagedObject, ManagedObjectContext) throws -> Bool) throws -> BatchResult {
        let scratch = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: self)
        scratch.makesBatchInsertObjects = true
        if let subclass { try scratch.useSubclass(subclass) }
        return try execute(request, dictionaryHandler: { values in
            let object = try scratch.insertNewObject(forEntityName: request.entityName)
            defer { scratch.reset() }
            if try handler(object, scratch) { return true }
            values = scratch.batchInsertValues(of: object)
            return false
        })
    }
}

extension ManagedObjectContext {
    /// The values a batch insert's handler set on `object`: written attributes and to-one relationships.
    func batchInsertValues(of object: ManagedObject) -> [String: AttributeValue] {
        withLock {
            var values: [String: AttributeValue] = [:]
            for slot in object.layout.writableSlots where object.changedSlots & (1 << UInt64(slot)) != 0 {
                values[object.layout.slotNames[slot]] = object.values[slot]
            }
            return values
        }
    }
}
