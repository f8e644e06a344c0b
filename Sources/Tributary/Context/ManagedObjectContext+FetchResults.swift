import Foundation

extension ManagedObjectContext {
    /// The rows matching `request` as dictionaries (Core Data's dictionary result type),
    /// read through the context's reader and query generation, so a pinned context sees
    /// the rows of its generation. Unsaved changes are not included (as in Core Data).
    ///
    /// ```swift
    /// var request = FetchRequest(entityName: "Quake", sortDescriptors: [SortDescriptor("magnitude", ascending: false)])
    /// request.resultType = .dictionary
    /// request.propertiesToFetch = ["place", "magnitude"]
    /// let rows = try context.fetchRows(request)   // rows[0]["place"]
    /// ```
    public func fetchRows(_ request: FetchRequest) throws -> [FetchedRow] {
        try withLock {
            let store = try requireStore()
            var rowRequest = request
            if rowRequest.resultType != .objectID { rowRequest.resultType = .dictionary }
            let query = try FetchQuery(rowRequest, schema: store.schema)
            let batchSize = request.fetchBatchSize > 0 ? request.fetchBatchSize : 1000
            let storeID = store.identifier
            var rows: [FetchedRow] = []
            try withReader { db in
                let statement = try db.makeStatement(query.sql)
                try statement.bind(query.arguments)
                try query.read(statement, storeID: storeID, batchSize: batchSize) { rows += $0 }
            }
            return rows
        }
    }

    /// The IDs of the saved objects matching `request` (Core Data's object ID result type),
    /// read through the context's reader and query generation.
    ///
    /// ```swift
    /// var request = FetchRequest(entityName: "Quake", predicate: try StorePredicate(format: "magnitude < 2"))
    /// request.resultType = .objectID
    /// try context.execute(BatchDeleteRequest(objectIDs: try context.fetchObjectIDs(request)))
    /// ```
    public func fetchObjectIDs(_ request: FetchRequest) throws -> [ObjectID] {
        var idRequest = request
        idRequest.resultType = .objectID
        return try fetchRows(idRequest).map(\.objectID)
    }
}
