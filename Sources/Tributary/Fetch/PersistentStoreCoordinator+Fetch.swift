extension PersistentStoreCoordinator {
    /// The rows matching `request`, as dictionaries (or with only IDs filled for `.objectID`).
    ///
    /// ```swift
    /// let recent = try coordinator.fetch(FetchRequest(entityName: "Post", sortDescriptors: [SortDescriptor("createdAt", ascending: false)]))
    /// ```
    public func fetch(_ request: FetchRequest) throws -> [FetchedRow] {
        var rows: [FetchedRow] = []
        try enumerate(request) { batch in rows += batch }
        return rows
    }

    /// The object IDs of the rows matching `request`.
    public func fetchObjectIDs(_ request: FetchRequest) throws -> [ObjectID] {
        var request = request
        request.resultType = .objectID
        return try fetch(request).map(\.objectID)
    }

    /// The number of rows matching `request` (its limit and offset apply).
    public func count(for request: FetchRequest) throws -> Int {
        let store = try requireStore()
        var countRequest = request
        countRequest.resultType = .count
        countRequest.fetchLimit = 0
        countRequest.fetchOffset = 0
        let query = try FetchQuery(countRequest, schema: store.schema)
        var total = try store.database.read { db in
            Int(try db.scalar(query.sql, query.arguments)?.integerValue ?? 0)
        }
        total = max(0, total - request.fetchOffset)
        return request.fetchLimit > 0 ? min(total, request.fetchLimit) : total
    }

    /// Streams the rows matching `request` in batches of `fetchBatchSize` (1,000 by
    /// default), from one consistent snapshot, holding at most one batch in memory.
    ///
    /// ```swift
    /// try coordinator.enumerate(request) { batch in
    ///     for row in batch { index(row) }
    /// }
    /// ```
    public func enumerate(_ request: FetchRequest, _ body: ([FetchedRow]) throws -> Void) throws {
        let store = try requireStore()
        let query = try FetchQuery(request, schema: store.schema)
        let batchSize = request.fetchBatchSize > 0 ? request.fetchBatchSize : 1000
        let storeID = store.identifier
        try store.database.read { db in
            let statement = try db.makeStatement(query.sql)
            try statement.bind(query.arguments)
            try query.read(statement, storeID: storeID, batchSize: batchSize, body)
        }
    }

    /// Steps through the rows matching `request` one at a time, from one consistent
    /// snapshot, without building rows: `body` reads what it needs from the current row.
    /// The fastest way to read many rows (GRDB's cursors work the same way).
    ///
    /// ```swift
    /// var total = 0
    /// try coordinator.enumerateRows(FetchRequest(entityName: "Post")) { row in
    ///     total += row["title"]?.stringValue?.count ?? 0
    /// }
    /// ```
    public func enumerateRows(_ request: FetchRequest, _ body: (FetchedRowView) throws -> Void) throws {
        let store = try requireStore()
        var request = request
        request.resultType = .dictionary
        let query = try FetchQuery(request, schema: store.schema)
        let storeID = store.identifier
        try store.database.read { db in
            let statement = try db.makeStatement(query.sql)
            try statement.bind(query.arguments)
            let view = FetchedRowView(statement: statement, query: query, storeID: storeID)
            while try statement.step() { try body(view) }
        }
    }
}
