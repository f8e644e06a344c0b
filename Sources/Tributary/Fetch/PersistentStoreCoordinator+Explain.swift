extension PersistentStoreCoordinator {
    /// The SQL `request` compiles to and SQLite's plan for it, without running it.
    ///
    /// ```swift
    /// let explanation = try coordinator.explain(FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "createdAt > %@", .date(cutoff))))
    /// print(explanation.queryPlanText)   // `--SEARCH t0 USING INDEX Post_index_createdAt (createdAt>?)
    /// ```
    public func explain(_ request: FetchRequest) throws -> FetchExplanation {
        let store = try requireStore()
        let query = try FetchQuery(request, schema: store.schema)
        let steps = try store.database.read { db in
            let statement = try db.makeStatement("EXPLAIN QUERY PLAN " + query.sql)
            try statement.bind(query.arguments)
            // Rows are (id, parent, notused, detail); a step's parent is an earlier id or 0.
            var depthByID: [Int64: Int] = [0: -1]
            var steps: [FetchExplanation.Step] = []
            while try statement.step() {
                let depth = (depthByID[statement.int64(at: 1)] ?? -1) + 1
                depthByID[statement.int64(at: 0)] = depth
                steps.append(FetchExplanation.Step(depth: depth, detail: statement.string(at: 3)))
            }
            return steps
        }
        return FetchExplanation(sql: query.sql, arguments: query.arguments, queryPlan: steps)
    }
}
