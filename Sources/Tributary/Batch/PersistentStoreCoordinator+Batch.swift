extension PersistentStoreCoordinator {
    /// Runs a batch insert in one transaction; a bad object rejects the whole batch.
    ///
    /// ```swift
    /// let result = try coordinator.execute(BatchInsertRequest(entityName: "Tag", objects: [["name": "swift"]]))
    /// ```
    @discardableResult
    public func execute(_ request: BatchInsertRequest) throws -> BatchResult {
        let store = try requireStore()
        var inserter = try BatchInserter(store: store, entityName: request.entityName)
        inserter.validator.writesValuesAsGiven = request.writesValuesAsGiven
        return try store.write(request.transaction) { db in
            if request.columns.isEmpty {
                // Rows of no column (a table of keys alone) are that many objects of no value.
                let objects = request.objects.isEmpty ? request.rows.map { _ in [:] } : request.objects
                return try inserter.run(objects, primaryKeys: request.primaryKeys, resultType: request.resultType, on: db)
            }
            return try inserter.run(columns: request.columns, rows: request.rows, primaryKeys: request.primaryKeys, resultType: request.resultType, on: db)
        }
    }

    /// Runs a batch insert whose objects come from `dictionaryHandler`, one per call, in one
    /// transaction (Core Data's `NSBatchInsertRequest(entity:dictionaryHandler:)`): the handler
    /// fills the dictionary and returns false, or returns true when there are no more objects
    /// (that call's dictionary is not inserted). Objects are inserted 1,000 at a time as they
    /// come, so a long import never holds them all; `request.objects` and `rows` are ignored.
    /// A handler that throws, like a bad object, rejects the whole batch.
    ///
    /// ```swift
    /// var index = 0
    /// try coordinator.execute(BatchInsertRequest(entityName: "Quake", objects: [])) { object in
    ///     guard index < feed.count else { return true }
    ///     object = ["code": .string(feed[index].code), "magnitude": .double(feed[index].magnitude)]
    ///     index += 1
    ///     return false
    /// }
    /// ```
    @discardableResult
    public func execute(_ request: BatchInsertRequest, dictionaryHandler: (inout [String: AttributeValue]) throws -> Bool) throws -> BatchResult {
        let store = try requireStore()
        var inserter = try BatchInserter(store: store, entityName: request.entityName)
        inserter.validator.writesValuesAsGiven = request.writesValuesAsGiven
        return try store.write(request.transaction) { db in
            var total = BatchResult()
            var chunk: [[String: AttributeValue]] = []
            chunk.reserveCapacity(1000)
            var finished = false
            while !finished {
                var object: [String: AttributeValue] = [:]
                finished = try dictionaryHandler(&object)
                if !finished { chunk.append(object) }
                if chunk.count == 1000 || (finished && !chunk.isEmpty) {
                    let part = try inserter.run(chunk, resultType: request.resultType, on: db)
                    total.add(part)
                    chunk.removeAll(keepingCapacity: true)
                }
            }
            return total
        }
    }

    /// Runs a batch update in one transaction.
    ///
    /// ```swift
    /// try coordinator.execute(BatchUpdateRequest(entityName: "Tag", propertiesToUpdate: ["color": "red"]))
    /// ```
    @discardableResult
    public func execute(_ request: BatchUpdateRequest) throws -> BatchResult {
        let store = try requireStore()
        let table = try store.schema.table(request.entityName)
        var validator = ValueValidator(table: table)
        validator.writesValuesAsGiven = request.writesValuesAsGiven
        var assignments: [String] = []
        var arguments: [AttributeValue] = []
        for (key, value) in request.propertiesToUpdate.sorted(by: { $0.key < $1.key }) {
            if let attribute = table.entity.attribute(named: key) {
                if attribute.isDerived { throw validator.derived(key, row: nil) }
                arguments.append(try validator.attributeValue(value, attribute, row: nil))
            } else if let relationship = table.entity.relationship(named: key), case .foreignKeyHere = table.storage[key]! {
                arguments.append(try validator.targetKey(value, relationship, row: nil))
            } else {
                throw validator.unknownKey(key, row: nil)
            }
            assignments.append("\(quote(key)) = ?")
        }
        let links = try LinkEditor(table: table, added: request.addedLinks, removed: request.removedLinks)
        guard !assignments.isEmpty || !links.isEmpty else {
            throw TributaryError(.invalidInput, "a batch update needs at least one value to set", location: table.name, hint: "give key=value pairs")
        }
        let filter = try Self.whereClause(request.predicate, objectIDs: request.objectIDs, table: table, schema: store.schema)
        return try store.write(request.transaction) { db in
            let update = { () throws -> [Int64] in
                var keys: [Int64] = []
                do {
                    if table.keyMap != nil {
                        keys = try Self.keys(of: table, filter, on: db)
                        try db.execute("UPDATE \(table.writtenTable) SET \(table.assignments(assignments)) WHERE \(table.objectKey("IN (SELECT value FROM json_each(?))"))",
                                       arguments + [.keyList(keys)])
                    } else {
                        let statement = try db.makeStatement("UPDATE \(quote(table.name)) AS t0 SET \(table.assignments(assignments))\(filter.sql) RETURNING \(table.key)")
                        try statement.bind(arguments + filter.arguments)
                        while try statement.step() { keys.append(statement.int64(at: 0)) }
                    }
                } catch let error as SQLiteError {
                    throw UniqueViolation.translate(error, table: table, place: table.name)
                }
                try links.apply(to: keys, on: db)
                return keys
            }
            // A WITHOUT ROWID table, its own or one its links change, is written through the capture triggers (``KeyMap``).
            let keys = table.reachesWithoutRowid ? try store.writingThroughCaptureTriggers(on: db, update) : try update()
            var result = BatchResult(count: keys.count)
            if request.resultType == .objectIDs { result.objectIDs = keys.map { store.objectID(entity: table.name, primaryKey: $0) } }
            result.updated = result.count
            return result
        }
    }

    /// The keys of `table`'s rows that `filter` selects (``whereClause(_:objectIDs:table:schema:)``).
    static func keys(of table: StoreSchema.Table, _ filter: SQLFragment, on db: Connection) throws -> [Int64] {
        let statement = try db.makeStatement("SELECT t0.\(table.key) FROM \(quote(table.name)) t0\(filter.sql)")
        try statement.bind(filter.arguments)
        var keys: [Int64] = []
        while try statement.step() { keys.append(statement.int64(at: 0)) }
        return keys
    }

    /// The WHERE clause of a predicate, narrowed to `objectIDs` when some are given.
    static func whereClause(_ predicate: StorePredicate?, objectIDs: [ObjectID], table: StoreSchema.Table, schema: StoreSchema) throws -> SQLFragment {
        let filter = try FetchQuery.whereClause(predicate, table: table, schema: schema)
        guard !objectIDs.isEmpty else { return filter }
        for id in objectIDs where id.entityName != table.name {
            throw TributaryError(.invalidInput, "\(id) is not an object of \(table.name)", location: table.name, hint: "give object IDs of \(table.name) only")
        }
        let list = AttributeValue.keyList(objectIDs.map(\.primaryKey))
        let keys = "t0.\(table.key) IN (SELECT value FROM json_each(?))"
        if filter.sql.isEmpty { return SQLFragment(" WHERE " + keys, [list]) }
        return SQLFragment(filter.sql + " AND " + keys, filter.arguments + [list])
    }

    /// Runs a batch delete in one transaction, applying delete rules.
    ///
    /// ```swift
    /// try coordinator.execute(BatchDeleteRequest(entityName: "Post", predicate: try StorePredicate(format: "title == nil")))
    /// ```
    @discardableResult
    public func execute(_ request: BatchDeleteRequest) throws -> BatchResult {
        if request.deletesOnlyObjectIDs && request.objectIDs.isEmpty { return BatchResult() }
        let store = try requireStore()
        let table = try store.schema.table(request.entityName)
        let filter = try Self.whereClause(request.predicate, objectIDs: request.objectIDs, table: table, schema: store.schema)
        return try store.write(request.transaction) { db in
            let keys = try Self.keys(of: table, filter, on: db)
            var deleter = BatchDeleter(schema: store.schema)
            deleter.appliesRules = !request.deletesAsRecorded
            if table.reachesWithoutRowid {
                try store.writingThroughCaptureTriggers(on: db) { try deleter.delete(keys, of: table.name, on: db) }
            } else {
                try deleter.delete(keys, of: table.name, on: db)
            }
            var result = BatchResult(count: keys.count, deleted: deleter.deletedCount)
            if request.resultType == .objectIDs { result.objectIDs = keys.map { store.objectID(entity: table.name, primaryKey: $0) } }
            return result
        }
    }
}
