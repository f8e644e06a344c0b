/// Compiles a ``StorePredicate`` against an entity's table into an SQL expression
/// with bound parameters only: no value is ever interpolated into the SQL.
///
/// Key paths through to-one relationships become correlated subqueries; key
/// paths through to-many relationships need `ANY`, `ALL` or `NONE` and become
/// `EXISTS` subqueries, so the same expression works in SELECT, UPDATE and DELETE.
struct PredicateCompiler {
    let schema: StoreSchema
    private var aliasCounter = 0
    /// The members a `SUBQUERY` variable (`$t`, with its `$`) stands for while its predicate compiles.
    var variables: [String: (table: StoreSchema.Table, alias: String)] = [:]
    /// Whether key paths may name aggregates over the rows (``FetchExpression``): in a grouped fetch.
    var aggregatesAllowed = false

    init(schema: StoreSchema) {
        self.schema = schema
    }

    /// The type of a resolved key path.
    enum ValueKind: Equatable {
        case attribute(AttributeType)
        case toOne(entity: String)
    }

    /// A key path (or a subquery's count) resolved to a scalar SQL expression, with the
    /// values its `?` placeholders take, in order.
    struct Scalar {
        var sql: String
        var kind: ValueKind
        var arguments: [AttributeValue] = []
        /// Whether it is a to-one's column of an adopted table, which another program may
        /// have given a value that is no key (`'x'`): the object reads nil there, so `== nil`
        /// matches it too.
        var mayHoldNonKeys = false
    }

    mutating func nextAlias() -> String {
        aliasCounter += 1
        return "t\(aliasCounter)"
    }

    // MARK: Predicates

    mutating func compile(_ predicate: StorePredicate, table: StoreSchema.Table, alias: String) throws -> SQLFragment {
        switch predicate {
        case .constant(let value):
            return SQLFragment(value ? "1" : "0")
        case .not(let inner):
            let fragment = try compile(inner, table: table, alias: alias)
            return SQLFragment("NOT (\(fragment.sql))", fragment.arguments)
        case .and(let parts), .or(let parts):
            guard !parts.isEmpty else { return SQLFragment(predicate == .and([]) ? "1" : "0") }
            var sql: [String] = []
            var arguments: [AttributeValue] = []
            for part in parts {
                let fragment = try compile(part, table: table, alias: alias)
                sql.append("(\(fragment.sql))")
                arguments += fragment.arguments
            }
            let joiner: String
            if case .and = predicate { joiner = " AND " } else { joiner = " OR " }
            return SQLFragment(sql.joined(separator: joiner), arguments)
        case .comparison(let comparison):
            return try compile(comparison, table: table, alias: alias)
        }
    }

    private mutating func compile(_ comparison: Comparison, table: StoreSchema.Table, alias: String) throws -> SQLFragment {
        if case .subqueryCount(let subquery) = comparison.left {
            guard comparison.modifier == .direct else {
                throw TributaryError(.invalidPredicate, "\(comparison.modifier.rawValue) cannot stand before SUBQUERY(…)", location: "predicate", hint: "write SUBQUERY(…).@count > 0 alone")
            }
            return try compare(try count(subquery, table: table, alias: alias), comparison, table: table, alias: alias)
        }
        // `'swift' IN tags.name` reads as `ANY tags.name == 'swift'`; `'x' IN title` as `title CONTAINS 'x'`.
        if comparison.op == .in, case .constant = comparison.left, case .keyPath(let path) = comparison.right {
            let base = try based(path, table: table, alias: alias)
            let manyPath = try toManyPrefix(base.path, table: base.table)
            let flipped = Comparison(left: .keyPath(path), op: manyPath == nil ? .contains : .equal, right: comparison.left,
                                     modifier: manyPath == nil ? .direct : .any, options: comparison.options)
            return try compile(flipped, table: table, alias: alias)
        }
        guard case .keyPath(let path) = comparison.left else {
            throw TributaryError(.invalidPredicate, "the left side of '\(comparison.op.rawValue)' must be a key path", location: "predicate", hint: "write the attribute first, as in title == 'x'")
        }
        let base = try based(path, table: table, alias: alias)
        if let (relationship, rest) = try toManyPrefix(base.path, table: base.table) {
            return try compileToMany(comparison, relationship: relationship, rest: rest, table: base.table, alias: base.alias)
        }
        if comparison.modifier != .direct {
            throw TributaryError(.invalidPredicate, "\(comparison.modifier.rawValue) needs a to-many key path, and '\(path.joined(separator: "."))' is not one", location: "predicate key path '\(path.joined(separator: "."))'", hint: "remove \(comparison.modifier.rawValue)")
        }
        let left = try resolve(path, table: table, alias: alias)
        return try compare(left, comparison, table: table, alias: alias)
    }

    /// When `path` crosses a to-many relationship (possibly after to-one steps, which
    /// are not supported before a to-many here), returns it and the rest of the path.
    private func toManyPrefix(_ path: [String], table: StoreSchema.Table) throws -> (RelationshipDescription, [String])? {
        guard let first = path.first, let relationship = table.entity.relationship(named: first), relationship.isToMany else { return nil }
        if path.count > 1, path[1].hasPrefix("@") { return nil }
        return (relationship, Array(path.dropFirst()))
    }

    private mutating func compileToMany(_ comparison: Comparison, relationship: RelationshipDescription, rest: [String], table: StoreSchema.Table, alias: String) throws -> SQLFragment {
        let name = ([relationship.name] + rest).joined(separator: ".")
        guard comparison.modifier != .direct else {
            throw TributaryError(.invalidPredicate, "'\(name)' goes through the to-many relationship '\(relationship.name)'", location: "predicate key path '\(name)'",
                                 hint: "say ANY, ALL or NONE before it, as in ANY \(name) == 'x'")
        }
        let destination = try schema.table(relationship.destinationEntity)
        let inner = nextAlias()
        let source = membership(relationship, table: table, alias: alias, destinationAlias: inner)
        var innerComparison = comparison
        innerComparison.modifier = .direct
        let condition: SQLFragment
        if rest.isEmpty {
            let scalar = Scalar(sql: "\(inner).\(destination.key)", kind: .toOne(entity: destination.name))
            condition = try compare(scalar, innerComparison, table: destination, alias: inner)
        } else {
            innerComparison.left = .keyPath(rest)
            condition = try compile(innerComparison, table: destination, alias: inner)
        }
        switch comparison.modifier {
        case .all:
            return SQLFragment("NOT EXISTS (SELECT 1 \(source) AND NOT (\(condition.sql)))", condition.arguments)
        case .none:
            return SQLFragment("NOT EXISTS (SELECT 1 \(source) AND (\(condition.sql)))", condition.arguments)
        case .any, .direct:
            return SQLFragment("EXISTS (SELECT 1 \(source) AND (\(condition.sql)))", condition.arguments)
        }
    }

    /// `FROM … WHERE …` selecting the destination rows of a to-many relationship as `destinationAlias`.
    func membership(_ relationship: RelationshipDescription, table: StoreSchema.Table, alias: String, destinationAlias: String) -> String {
        let destination = quote(relationship.destinationEntity)
        let (key, destinationKey) = (table.key, table.destinationKey(relationship.name))
        switch table.storage[relationship.name]! {
        case .joinTable(let joinTable, let sourceColumn, let destinationColumn):
            return "FROM \(quote(joinTable)) j_\(destinationAlias) JOIN \(destination) \(destinationAlias) ON \(destinationAlias).\(destinationKey) = j_\(destinationAlias).\(quote(destinationColumn)) WHERE j_\(destinationAlias).\(quote(sourceColumn)) = \(alias).\(key)"
        case .foreignKeyOnDestination(let column):
            return "FROM \(destination) \(destinationAlias) WHERE \(destinationAlias).\(quote(column)) = \(alias).\(key)"
        case .foreignKeyHere(let column):
            return "FROM \(destination) \(destinationAlias) WHERE \(destinationAlias).\(destinationKey) = \(alias).\(quote(column))"
        }
    }

    // MARK: Key paths

    /// Resolves a key path of attributes and to-one relationships (and a final `@count`
    /// of a to-many relationship) to a scalar expression.
    mutating func resolve(_ path: [String], table: StoreSchema.Table, alias: String) throws -> Scalar {
        let name = path.joined(separator: ".")
        func unknown(_ key: String, in entity: EntityDescription) -> TributaryError {
            TributaryError(.invalidPredicate, "unknown key '\(key)' in '\(name)': \(entity.name) has no such attribute or relationship", location: "predicate key path '\(name)'",
                           hint: "\(entity.name) has \(entity.propertyNames.joined(separator: ", "))")
        }
        guard let first = path.first else { throw TributaryError(.invalidPredicate, "an empty key path", location: "predicate") }
        if aggregatesAllowed, let expression = FetchExpression(name) {
            // A grouped fetch's `@sum.magnitude` or `count:(code)`, in its HAVING or ORDER BY.
            aggregatesAllowed = false
            defer { aggregatesAllowed = true }
            return try aggregate(expression, written: name, table: table, alias: alias)
        }
        if first.hasPrefix("$") {
            // A SUBQUERY variable: `$t` is the member itself, `$t.name` its name.
            let variable = try self.variable(first, in: name)
            if path.count == 1 { return Scalar(sql: "\(variable.alias).\(variable.table.key)", kind: .toOne(entity: variable.table.name)) }
            return try resolve(Array(path.dropFirst()), table: variable.table, alias: variable.alias)
        }
        if Self.isSelf(first, in: table.entity) {
            // `SELF` is the object itself (its ID); `self.title` is `title`.
            if path.count == 1 { return Scalar(sql: "\(alias).\(table.key)", kind: .toOne(entity: table.name)) }
            return try resolve(Array(path.dropFirst()), table: table, alias: alias)
        }
        if let attribute = table.entity.attribute(named: first) {
            guard path.count == 1 else {
                throw TributaryError(.invalidPredicate, "'\(first)' is an attribute, so '\(name)' cannot go past it", location: "predicate key path '\(name)'", hint: "use the attribute alone")
            }
            return Scalar(sql: "\(alias).\(quote(attribute.name))", kind: .attribute(attribute.type))
        }
        guard let relationship = table.entity.relationship(named: first) else { throw unknown(first, in: table.entity) }
        let destination = try schema.table(relationship.destinationEntity)
        if relationship.isToMany, path.count == 3, let function = FetchExpression(path[1] + "." + path[2]), function.function != .count {
            // The smallest, largest, total or average value of an attribute over the members (`tags.@min.name`).
            guard destination.entity.attribute(named: path[2]) != nil else { throw unknown(path[2], in: destination.entity) }
            let inner = nextAlias()
            let value = try aggregate(function, written: name, table: destination, alias: inner)
            return Scalar(sql: "(SELECT \(value.sql) \(membership(relationship, table: table, alias: alias, destinationAlias: inner)))", kind: value.kind, arguments: value.arguments)
        }
        if relationship.isToMany {
            guard path.count == 2, path[1] == "@count" else {
                throw TributaryError(.invalidPredicate, "'\(name)' goes through the to-many relationship '\(first)'", location: "predicate key path '\(name)'",
                                     hint: "say ANY, ALL or NONE before it, or use \(first).@count, \(first).@min.KEY, \(first).@max.KEY, \(first).@sum.KEY or \(first).@avg.KEY")
            }
            let inner = nextAlias()
            return Scalar(sql: "(SELECT count(*) \(membership(relationship, table: table, alias: alias, destinationAlias: inner)))", kind: .attribute(.integer))
        }
        let keySQL: String
        switch table.storage[relationship.name]! {
        case .foreignKeyHere(let column):
            keySQL = "\(alias).\(quote(column))"
        case .foreignKeyOnDestination(let column):
            let inner = nextAlias()
            keySQL = "(SELECT \(inner).\(destination.key) FROM \(quote(destination.name)) \(inner) WHERE \(inner).\(quote(column)) = \(alias).\(table.key))"
        case .joinTable:
            throw unknown(first, in: table.entity)
        }
        if path.count == 1 {
            let adoptedColumn = table.entity.tableKey != nil && { if case .foreignKeyHere = table.storage[relationship.name]! { true } else { false } }()
            return Scalar(sql: keySQL, kind: .toOne(entity: destination.name), mayHoldNonKeys: adoptedColumn)
        }
        let inner = nextAlias()
        let rest = try resolve(Array(path.dropFirst()), table: destination, alias: inner)
        return Scalar(sql: "(SELECT \(rest.sql) FROM \(quote(destination.name)) \(inner) WHERE \(inner).\(destination.key) = \(keySQL))", kind: rest.kind, arguments: rest.arguments)
    }

    /// Whether `key` is `SELF` (any case) rather than a property of `entity` so named.
    static func isSelf(_ key: String, in entity: EntityDescription) -> Bool {
        key.uppercased() == "SELF" && entity.attribute(named: key) == nil && entity.relationship(named: key) == nil
    }

    // MARK: Comparing

    private mutating func compare(_ left: Scalar, _ comparison: Comparison, table: StoreSchema.Table, alias: String) throws -> SQLFragment {
        let op = comparison.op
        let caseInsensitive = comparison.options.contains(.caseInsensitive)
        let place = "predicate near '\(op.rawValue)'"
        // Right side: a key path, a constant, or a list.
        var rightValues: [AttributeValue] = []
        var rightSQL: String?
        var rightArguments: [AttributeValue] = []
        switch comparison.right {
        case .keyPath(let path):
            let right = try resolve(path, table: table, alias: alias)
            rightSQL = right.sql
            rightArguments = right.arguments
        case .subqueryCount(let subquery):
            let right = try count(subquery, table: table, alias: alias)
            rightSQL = right.sql
            rightArguments = right.arguments
        case .constant(.array(let items)):
            rightValues = items
        case .constant(let value):
            rightValues = [value]
        case .aggregate(let items):
            for item in items {
                guard case .constant(let value) = item else {
                    throw TributaryError(.invalidPredicate, "a list may hold only constants", location: place, hint: "write {1, 2, 3} or pass an array argument")
                }
                rightValues.append(value)
            }
        }
        if let rightSQL {
            let symbol = try sqlOperator(op, place: place)
            return SQLFragment(caseInsensitive ? "lower(\(left.sql)) \(symbol) lower(\(rightSQL))" : "\(left.sql) \(symbol) \(rightSQL)", left.arguments + rightArguments)
        }
        // Comparisons with nil.
        if rightValues.count == 1, rightValues[0].isNull, op == .equal || op == .notEqual {
            if left.mayHoldNonKeys { return SQLFragment("typeof(\(left.sql)) \(op == .equal ? "!=" : "=") 'integer'", left.arguments) }
            return SQLFragment("\(left.sql) \(op == .equal ? "IS NULL" : "IS NOT NULL")", left.arguments)
        }
        let values = try rightValues.map { try bindable($0, for: left.kind, op: op, place: place) }
        let isString = left.kind == .attribute(.string)
        let l = caseInsensitive && isString ? "lower(\(left.sql))" : left.sql
        let p = caseInsensitive && isString ? "lower(?)" : "?"
        func single() throws -> AttributeValue {
            guard values.count == 1 else {
                throw TributaryError(.invalidPredicate, "'\(op.rawValue)' takes one value, not a list", location: place, hint: "use IN for a list")
            }
            return values[0]
        }
        switch op {
        case .equal, .less, .lessOrEqual, .greater, .greaterOrEqual:
            return SQLFragment("\(l) \(try sqlOperator(op, place: place)) \(p)", left.arguments + [try single()])
        case .notEqual:
            return SQLFragment("\(l) IS NOT \(p)", left.arguments + [try single()])
        case .beginsWith, .endsWith, .contains, .like:
            guard isString else {
                throw TributaryError(.invalidPredicate, "'\(op.rawValue)' compares strings, and the key path is a \(describe(left.kind))", location: place, hint: "use ==, <, > or IN")
            }
            let value = try single()
            switch op {
            case .beginsWith:
                return SQLFragment("substr(\(l), 1, length(\(p))) = \(p)", left.arguments + [value, value])
            case .endsWith:
                return SQLFragment("(length(\(p)) = 0 OR substr(\(l), -length(\(p))) = \(p))", [value] + left.arguments + [value, value])
            case .contains:
                return SQLFragment("instr(\(l), \(p)) > 0", left.arguments + [value])
            default:
                let pattern = value.stringValue ?? ""
                if caseInsensitive {
                    return SQLFragment("\(left.sql) LIKE ? ESCAPE '\\'", left.arguments + [.string(Self.likePattern(pattern))])
                }
                return SQLFragment("\(left.sql) GLOB ?", left.arguments + [.string(Self.globPattern(pattern))])
            }
        case .matches:
            guard isString else {
                throw TributaryError(.invalidPredicate, "'MATCHES' compares strings, and the key path is a \(describe(left.kind))", location: place, hint: "use ==, <, > or IN")
            }
            let value = try single()
            guard let pattern = value.stringValue else {
                throw TributaryError(.invalidPredicate, "MATCHES takes a pattern string, not \(value.kindName)", location: place, hint: "write title MATCHES '[A-Z].*'")
            }
            _ = try PredicateRegex.compile(pattern, caseInsensitive: caseInsensitive)   // a bad pattern fails here, not mid-query
            return SQLFragment("\(SQLFunctions.matches)(\(left.sql), ?, \(caseInsensitive ? 1 : 0))", left.arguments + [value])
        case .in:
            if values.isEmpty { return SQLFragment("0") }
            let marks = Array(repeating: p, count: values.count).joined(separator: ", ")
            return SQLFragment("\(l) IN (\(marks))", left.arguments + values)
        case .between:
            guard values.count == 2 else {
                throw TributaryError(.invalidPredicate, "BETWEEN needs two values, got \(values.count)", location: place, hint: "write BETWEEN {low, high}")
            }
            return SQLFragment("\(l) BETWEEN \(p) AND \(p)", left.arguments + values)
        }
    }

    private func sqlOperator(_ op: ComparisonOperator, place: String) throws -> String {
        switch op {
        case .equal: return "="
        case .notEqual: return "IS NOT"
        case .less: return "<"
        case .lessOrEqual: return "<="
        case .greater: return ">"
        case .greaterOrEqual: return ">="
        default:
            throw TributaryError(.invalidPredicate, "'\(op.rawValue)' cannot compare two key paths", location: place, hint: "compare a key path with a value")
        }
    }

    /// Converts a constant to what the column stores, or explains why it cannot be.
    private func bindable(_ value: AttributeValue, for kind: ValueKind, op: ComparisonOperator, place: String) throws -> AttributeValue {
        if value.isNull { return .null }
        switch kind {
        case .attribute(let type):
            // String operators compare text: keep the constant as given if it is a string.
            if [.beginsWith, .endsWith, .contains, .like, .matches].contains(op), case .string = value { return value }
            guard let converted = value.coerced(to: type) else {
                throw TributaryError(.typeMismatch, "\(value.kindName) \(value) cannot be compared with a \(type.rawValue)", location: place, hint: type.formatHint)
            }
            return converted
        case .toOne(let entity):
            switch value {
            case .objectID(let id) where id.entityName == entity:
                return .integer(id.primaryKey)
            case .integer(let key):
                return .integer(key)
            case .string(let text):
                if let id = ObjectID(uriRepresentation: text), id.entityName == entity { return .integer(id.primaryKey) }
            default:
                break
            }
            throw TributaryError(.typeMismatch, "\(value.kindName) \(value) is not an object ID of \(entity)", location: place, hint: "pass an ObjectID of \(entity) or its URI")
        }
    }

    private func describe(_ kind: ValueKind) -> String {
        switch kind {
        case .attribute(let type): return type.rawValue
        case .toOne(let entity): return "relationship to \(entity)"
        }
    }

    /// NSPredicate LIKE (`*`, `?`) to SQL LIKE with `\` as the escape character.
    static func likePattern(_ pattern: String) -> String {
        var out = ""
        for c in pattern {
            switch c {
            case "*": out.append("%")
            case "?": out.append("_")
            case "%", "_", "\\": out.append("\\"); out.append(c)
            default: out.append(c)
            }
        }
        return out
    }

    /// NSPredicate LIKE (`*`, `?`) to a case-sensitive GLOB pattern.
    static func globPattern(_ pattern: String) -> String {
        var out = ""
        for c in pattern {
            if c == "[" { out += "[[]" } else { out.append(c) }
        }
        return out
    }
}
