extension PredicateCompiler {
    /// `SUBQUERY(collection, $x, predicate).@count` as a correlated count: the members of the
    /// to-many relationship, aliased afresh, for which the predicate holds with `$x` bound to them.
    mutating func count(_ subquery: Subquery, table: StoreSchema.Table, alias: String) throws -> Scalar {
        let written = subquery.collection.joined(separator: ".")
        let base = try based(subquery.collection, table: table, alias: alias)
        guard base.path.count == 1, let relationship = base.table.entity.relationship(named: base.path[0]), relationship.isToMany else {
            let toMany = base.table.entity.relationships.filter(\.isToMany).map(\.name)
            throw TributaryError(.invalidPredicate, "SUBQUERY(…) iterates a to-many relationship, and '\(written)' is not one of \(base.table.name)",
                                 location: "predicate SUBQUERY(\(written), $\(subquery.variable), …)",
                                 hint: toMany.isEmpty ? "\(base.table.name) has no to-many relationship" : "use one of \(toMany.joined(separator: ", "))")
        }
        let destination = try schema.table(relationship.destinationEntity)
        let inner = nextAlias()
        let name = "$" + subquery.variable
        let enclosing = variables[name]
        let groupLevel = aggregatesAllowed
        variables[name] = (destination, inner)
        aggregatesAllowed = false   // a group's `@count` means nothing among one object's members
        defer {
            variables[name] = enclosing
            aggregatesAllowed = groupLevel
        }
        let condition = try compile(subquery.predicate, table: destination, alias: inner)
        let members = membership(relationship, table: base.table, alias: base.alias, destinationAlias: inner)
        return Scalar(sql: "(SELECT count(*) \(members) AND (\(condition.sql)))", kind: .attribute(.integer), arguments: condition.arguments)
    }

    /// A key path with its leading `SUBQUERY` variable (if any) replaced by the table and alias
    /// the variable stands for: `$t.posts` inside `SUBQUERY(tags, $t, …)` is `posts` of the tag.
    func based(_ path: [String], table: StoreSchema.Table, alias: String) throws -> (path: [String], table: StoreSchema.Table, alias: String) {
        guard let first = path.first, first.hasPrefix("$") else { return (path, table, alias) }
        let variable = try self.variable(first, in: path.joined(separator: "."))
        return (Array(path.dropFirst()), variable.table, variable.alias)
    }

    /// The members `name` (`$t`) stands for, or an error when no enclosing `SUBQUERY` declares it.
    func variable(_ name: String, in keyPath: String) throws -> (table: StoreSchema.Table, alias: String) {
        guard let variable = variables[name] else {
            let known = variables.keys.sorted()
            throw TributaryError(.invalidPredicate, "unknown variable '\(name)' in '\(keyPath)'", location: "predicate key path '\(keyPath)'",
                                 hint: known.isEmpty ? "variables exist only inside SUBQUERY(collection, \(name), …)" : "use \(known.joined(separator: ", "))")
        }
        return variable
    }
}
