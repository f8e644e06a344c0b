/// What a fetch request compiles to, and how SQLite plans to run it: the SQL, its
/// arguments and the query plan (`EXPLAIN QUERY PLAN`), where a missing index
/// shows as `SCAN` of the whole table and a used one as `SEARCH … USING INDEX`.
///
/// ```swift
/// let explanation = try coordinator.explain(FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "title == 'x'")))
/// print(explanation.sql)                     // SELECT t0."_pk", … FROM "Post" t0 WHERE t0."title" = ? ORDER BY t0."_pk" ASC
/// print(explanation.queryPlan.map(\.detail))  // ["SCAN t0"]
/// ```
public struct FetchExplanation: Sendable, Equatable {
    /// One step of SQLite's query plan.
    public struct Step: Sendable, Equatable {
        /// How deep the step is in the plan's tree (0 at the top).
        public let depth: Int
        /// SQLite's description, such as `SCAN t0` or `SEARCH t0 USING INDEX Post_index_createdAt (createdAt>?)`.
        public let detail: String
    }

    /// The SELECT the request compiles to, with `?` for its arguments.
    public let sql: String
    /// The values bound to the `?`s, in order.
    public let arguments: [AttributeValue]
    /// SQLite's plan, in its order.
    public let queryPlan: [Step]

    /// The plan drawn as a tree, as the `sqlite3` shell does.
    ///
    /// ```
    /// QUERY PLAN
    /// `--SCAN t0
    /// ```
    public var queryPlanText: String {
        var lines = ["QUERY PLAN"]
        for (index, step) in queryPlan.enumerated() {
            let isLast = !queryPlan[(index + 1)...].prefix { $0.depth >= step.depth }.contains { $0.depth == step.depth }
            var prefix = ""
            for level in 0..<step.depth {
                // A bar where an ancestor at this level has siblings below.
                let ancestorHasMore = queryPlan[(index + 1)...].prefix { $0.depth >= level }.contains { $0.depth == level }
                prefix += ancestorHasMore ? "|  " : "   "
            }
            lines.append(prefix + (isLast ? "`--" : "|--") + step.detail)
        }
        return lines.joined(separator: "\n")
    }
}
