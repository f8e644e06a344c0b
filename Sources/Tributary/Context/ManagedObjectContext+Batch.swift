import Foundation

extension ManagedObjectContext {
    /// The request's history metadata, with the context's author, name and reason where it gives none.
    func stamped(_ metadata: TransactionMetadata) -> TransactionMetadata {
        withLock { TransactionMetadata(author: metadata.author ?? authorValue, contextName: metadata.contextName ?? nameValue, reason: metadata.reason ?? reasonValue) }
    }

    /// Runs a batch insert through the context's coordinator, recording the context's
    /// ``transactionAuthor`` and ``name`` in history unless the request sets its own
    /// (Core Data's `execute(_:)`). Like Core Data, the context's objects are not
    /// changed: merge the result's IDs, or let ``automaticallyMergesChangesFromParent`` do it.
    ///
    /// ```swift
    /// context.transactionAuthor = "importer"
    /// try context.execute(BatchInsertRequest(entityName: "Quake", objects: rows))   // history: author "importer"
    /// ```
    @discardableResult
    public func execute(_ request: BatchInsertRequest) throws -> BatchResult {
        var request = request
        request.transaction = stamped(request.transaction)
        return try persistentStoreCoordinator.execute(request)
    }

    /// Runs a batch insert fed by `dictionaryHandler` under the context's author and name
    /// (see ``PersistentStoreCoordinator/execute(_:dictionaryHandler:)``).
    ///
    /// ```swift
    /// var rows = feed.makeIterator()
    /// try context.execute(BatchInsertRequest(entityName: "Quake", objects: [])) { object in
    ///     guard let row = rows.next() else { return true }
    ///     object = ["code": .string(row.code), "magnitude": .double(row.magnitude)]
    ///     return false
    /// }
    /// ```
    @discardableResult
    public func execute(_ request: BatchInsertRequest, dictionaryHandler: (inout [String: AttributeValue]) throws -> Bool) throws -> BatchResult {
        var request = request
        request.transaction = stamped(request.transaction)
        return try persistentStoreCoordinator.execute(request, dictionaryHandler: dictionaryHandler)
    }

    /// Runs a batch insert whose objects `managedObjectHandler` fills in, under the context's
    /// author and name (see the coordinator's `execute(_:managedObjectHandler:)`).
    /// The objects belong to no context of yours: this context's objects do not change.
    ///
    /// ```swift
    /// var feed = quakes.makeIterator()
    /// try context.execute(BatchInsertRequest(entityName: "Quake", objects: []), managedObjectHandler: { (quake: Quake) in
    ///     guard let next = feed.next() else { return true }
    ///     quake.code = next.code
    ///     return false
    /// })
    /// ```
    @discardableResult
    public func execute<T: EntityNamed>(_ request: BatchInsertRequest, managedObjectHandler: (T) throws -> Bool) throws -> BatchResult {
        var request = request
        request.transaction = stamped(request.transaction)
        return try persistentStoreCoordinator.execute(request, managedObjectHandler: managedObjectHandler)
    }

    /// Runs a batch insert whose objects `managedObjectHandler` fills in by key, under the
    /// context's author and name.
    ///
    /// ```swift
    /// try context.execute(BatchInsertRequest(entityName: "Tag", objects: []), managedObjectHandler: { (tag: ManagedObject) in
    ///     guard let name = names.next() else { return true }
    ///     try tag.setValue(.string(name), forKey: "name")
    ///     return false
    /// })
    /// ```
    @discardableResult
    public func execute(_ request: BatchInsertRequest, managedObjectHandler: (ManagedObject) throws -> Bool) throws -> BatchResult {
        var request = request
        request.transaction = stamped(request.transaction)
        return try persistentStoreCoordinator.execute(request, managedObjectHandler: managedObjectHandler)
    }

    /// Runs a batch update under the context's author and name (see the batch insert `execute(_:)`).
    ///
    /// ```swift
    /// try context.execute(BatchUpdateRequest(entityName: "Quake", propertiesToUpdate: ["reviewed": true]))
    /// ```
    @discardableResult
    public func execute(_ request: BatchUpdateRequest) throws -> BatchResult {
        var request = request
        request.transaction = stamped(request.transaction)
        return try persistentStoreCoordinator.execute(request)
    }

    /// Runs a batch delete under the context's author and name (see the batch insert `execute(_:)`).
    ///
    /// ```swift
    /// var request = BatchDeleteRequest(objectIDs: ids)
    /// request.resultType = .objectIDs
    /// let deleted = try context.execute(request).objectIDs
    /// ManagedObjectContext.mergeChanges(fromRemoteContextSave: [.delete: Set(deleted)], into: [viewContext])
    /// ```
    @discardableResult
    public func execute(_ request: BatchDeleteRequest) throws -> BatchResult {
        var request = request
        request.transaction = stamped(request.transaction)
        return try persistentStoreCoordinator.execute(request)
    }

    /// Runs a history request: a fetch answers as its ``PersistentHistoryChangeRequest/resultType``
    /// says; a delete deletes (see ``PersistentStoreCoordinator/deleteHistory(_:idleTimeout:dryRun:)``).
    ///
    /// ```swift
    /// var filter = HistoryFilter()
    /// filter.after = token
    /// filter.excludedAuthors = [context.transactionAuthor ?? ""]
    /// let transactions = try context.execute(.fetchHistory(withFilter: filter)).transactions ?? []
    /// ```
    @discardableResult
    public func execute(_ request: PersistentHistoryChangeRequest) throws -> PersistentHistoryResult {
        let coordinator = persistentStoreCoordinator
        if request.deleteTarget != nil { return .deleted(try coordinator.deleteHistory(request)) }
        switch request.resultType {
        case .count: return .count(try coordinator.countHistory(request))
        case .changesOnly: return .changes(try coordinator.fetchHistoryChanges(request))
        case .objectIDs:
            var seen: Set<ObjectID> = []
            return .objectIDs(try coordinator.fetchHistoryChanges(request).map(\.changedObjectID).filter { seen.insert($0).inserted })
        case .transactionsAndChanges, .transactionsOnly, .statusOnly:
            return .transactions(try coordinator.fetchHistory(request))
        }
    }
}
