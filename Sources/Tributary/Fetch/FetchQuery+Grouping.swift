extension FetchQuery {
    /// What makes a fetch's rows stand for no one object: groups, a HAVING filter,
    /// distinct rows, or aggregates (``FetchExpression``) in its properties.
    struct Grouping {
        let groupBy: [String]
        let having: StorePredicate?
        let distinct: Bool
    }

    /// The grouping of `request`, checked against Core Data's rules (dictionary results,
    /// properties to fetch, every plain property grouped, HAVING only with groups), or nil
    /// for a fetch whose rows are objects.
    static func grouping(of request: FetchRequest, table: StoreSchema.Table) throws -> Grouping? {
        let properties = request.propertiesToFetch ?? []
        let aggregates = properties.filter { table.entity.attribute(named: $0) == nil && FetchExpression($0) != nil }
        let groupBy = request.propertiesToGroupBy ?? []
        let feature: String
        if !groupBy.isEmpty { feature = "propertiesToGroupBy" }
        else if request.havingPredicate != nil { feature = "havingPredicate" }
        else if request.returnsDistinctResults { feature = "returnsDistinctResults" }
        else if let first = aggregates.first { feature = "the aggregate '\(first)' in propertiesToFetch" }
        else { return nil }
        let place = "fetch of \(table.name)"
        guard request.resultType == .dictionary else {
            throw TributaryError(.invalidInput, "\(feature) needs dictionary results, and the request asks for \(request.resultType)", location: place,
                                 hint: "set resultType = .dictionary and read the rows with context.fetchRows(_:) or coordinator.fetch(_:), as Core Data requires")
        }
        guard !properties.isEmpty else {
            throw TributaryError(.invalidInput, "\(feature) needs propertiesToFetch", location: place,
                                 hint: "list the grouped key paths and the aggregates, such as [\"place\", \"@count\", \"@avg.magnitude\"]")
        }
        if request.havingPredicate != nil, groupBy.isEmpty {
            throw TributaryError(.invalidInput, "havingPredicate filters groups, and the request has no propertiesToGroupBy", location: place,
                                 hint: "set propertiesToGroupBy, or move the condition to predicate")
        }
        if !groupBy.isEmpty || !aggregates.isEmpty {
            for name in properties where !aggregates.contains(name) && !groupBy.contains(name) {
                throw TributaryError(.invalidInput, "'\(name)' is fetched from groups of rows but is neither grouped nor an aggregate", location: place,
                                     hint: "add '\(name)' to propertiesToGroupBy, or fetch an aggregate of it such as @max.\(name)")
            }
        }
        return Grouping(groupBy: groupBy, having: request.havingPredicate, distinct: request.returnsDistinctResults)
    }

    /// The SQL and column kind of one entry of `propertiesToFetch`: an attribute, a to-one
    /// relationship, a key path, or (in a grouped fetch) an aggregate.
    static func property(_ name: String, table: StoreSchema.Table, compiler: inout PredicateCompiler) throws -> PredicateCompiler.Scalar {
        if let attribute = table.entity.attribute(named: name) {
            return PredicateCompiler.Scalar(sql: "t0.\(quote(name))", kind: .attribute(attribute.type))
        }
        if let relationship = table.entity.relationship(named: name), !relationship.isToMany {
            return try compiler.resolve([name], table: table, alias: "t0")
        }
        if name.contains(".") || (compiler.aggregatesAllowed && FetchExpression(name) != nil) {
            // `author.name`, a to-many's `tags.@count`, or `@sum.magnitude`; the row's key is the text as written.
            return try compiler.resolve(name.split(separator: ".").map(String.init), table: table, alias: "t0")
        }
        throw TributaryError(.unknownProperty, "\(table.name) has no attribute or to-one relationship '\(name)'", location: "propertiesToFetch",
                             hint: "\(table.name) has \(table.entity.propertyNames.joined(separator: ", "))")
    }

    /// ` GROUP BY … HAVING …` of a grouped fetch (empty for distinct or aggregate-only rows).
    static func groupClauses(_ grouping: Grouping, table: StoreSchema.Table, compiler: inout PredicateCompiler) throws -> SQLFragment {
        guard !grouping.groupBy.isEmpty else { return SQLFragment("") }
        var sql: [String] = []
        var arguments: [AttributeValue] = []
        for name in grouping.groupBy {
            if FetchExpression(name) != nil, table.entity.attribute(named: name) == nil {
                throw TributaryError(.invalidInput, "cannot group by the aggregate '\(name)'", location: "propertiesToGroupBy", hint: "group by attributes, to-one relationships or key paths through them")
            }
            let scalar = try property(name, table: table, compiler: &compiler)
            sql.append(scalar.sql)
            arguments += scalar.arguments
        }
        var clauses = " GROUP BY " + sql.joined(separator: ", ")
        if let having = grouping.having {
            let fragment = try compiler.compile(having, table: table, alias: "t0")
            clauses += " HAVING " + fragment.sql
            arguments += fragment.arguments
        }
        return SQLFragment(clauses, arguments)
    }
}
