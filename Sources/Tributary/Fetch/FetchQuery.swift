import Foundation

/// A fetch request compiled to SQL for one store: the SELECT, its arguments,
/// and how to turn each column back into an ``AttributeValue``.
struct FetchQuery {
    enum Column {
        case attribute(AttributeType)
        case toOne(entity: String)
    }

    let sql: String
    let arguments: [AttributeValue]
    let layout: RowLayout
    let columns: [Column]
    let entityName: String

    /// Compiles the WHERE clause of `predicate` over `table` aliased `t0`.
    static func whereClause(_ predicate: StorePredicate?, table: StoreSchema.Table, schema: StoreSchema) throws -> SQLFragment {
        guard let predicate else { return SQLFragment("") }
        var compiler = PredicateCompiler(schema: schema)
        let fragment = try compiler.compile(predicate, table: table, alias: "t0")
        return SQLFragment(" WHERE " + fragment.sql, fragment.arguments)
    }

    init(_ request: FetchRequest, schema: StoreSchema) throws {
        let table = try schema.table(request.entityName)
        entityName = table.name
        var compiler = PredicateCompiler(schema: schema)
        var arguments: [AttributeValue] = []
        var names: [String] = []
        var columns: [Column] = []
        var selected = ["t0.\"_pk\""]
        if request.resultType == .dictionary {
            let wanted = request.propertiesToFetch ?? (table.entity.attributes.map(\.name) + table.entity.relationships.filter { !$0.isToMany }.map(\.name))
            for name in wanted {
                if let attribute = table.entity.attribute(named: name) {
                    selected.append("t0.\(quote(name))")
                    columns.append(.attribute(attribute.type))
                } else if let relationship = table.entity.relationship(named: name), !relationship.isToMany {
                    selected.append(try compiler.resolve([name], table: table, alias: "t0").sql)
                    columns.append(.toOne(entity: relationship.destinationEntity))
                } else {
                    throw TributaryError(.unknownProperty, "\(table.name) has no attribute or to-one relationship '\(name)'", location: "propertiesToFetch",
                                         hint: "\(table.name) has \(table.entity.propertyNames.joined(separator: ", "))")
                }
                names.append(name)
            }
        }
        var sql = request.resultType == .count
            ? "SELECT count(*) FROM \(quote(table.name)) t0"
            : "SELECT \(selected.joined(separator: ", ")) FROM \(quote(table.name)) t0"
        if let predicate = request.predicate {
            let fragment = try compiler.compile(predicate, table: table, alias: "t0")
            sql += " WHERE " + fragment.sql
            arguments += fragment.arguments
        }
        if request.resultType != .count {
            var order: [String] = []
            for descriptor in request.sortDescriptors {
                let path = descriptor.key.split(separator: ".").map(String.init)
                let scalar: PredicateCompiler.Scalar
                do {
                    scalar = try compiler.resolve(path, table: table, alias: "t0")
                } catch let error as TributaryError {
                    throw TributaryError(.unknownProperty, "cannot sort by '\(descriptor.key)': \(error.message)", location: "sort", hint: error.hint)
                }
                order.append("\(scalar.sql) \(descriptor.ascending ? "ASC" : "DESC")")
            }
            order.append("t0.\"_pk\" ASC")
            sql += " ORDER BY " + order.joined(separator: ", ")
        }
        if request.fetchLimit > 0 || request.fetchOffset > 0 {
            sql += " LIMIT ? OFFSET ?"
            arguments += [.integer(request.fetchLimit > 0 ? Int64(request.fetchLimit) : -1), .integer(Int64(request.fetchOffset))]
        }
        self.sql = sql
        self.arguments = arguments
        self.layout = RowLayout(names: names)
        self.columns = columns
    }

    /// Reads the current row of `statement` (column 0 is `_pk`).
    @inline(__always)
    func row(from statement: Statement, storeID: UUID) -> FetchedRow {
        var values: [AttributeValue] = []
        values.reserveCapacity(columns.count)
        for (i, column) in columns.enumerated() {
            values.append(Self.decode(statement, at: i + 1, as: column, storeID: storeID))
        }
        return FetchedRow(objectID: ObjectID(storeID: storeID, entityName: entityName, primaryKey: statement.int64(at: 0)), layout: layout, values: values)
    }

    @inline(__always)
    static func decode(_ statement: Statement, at index: Int, as column: Column, storeID: UUID) -> AttributeValue {
        if statement.isNull(at: index) { return .null }
        switch column {
        case .attribute(let type):
            switch type {
            case .string: return .string(statement.string(at: index))
            case .integer: return .integer(statement.int64(at: index))
            case .double: return .double(statement.double(at: index))
            case .bool: return .bool(statement.int64(at: index) != 0)
            case .date: return .date(Date(timeIntervalSince1970: statement.double(at: index)))
            case .uuid:
                let text = statement.string(at: index)
                return UUID(uuidString: text).map { .uuid($0) } ?? .string(text)
            case .binary: return .data(statement.data(at: index))
            }
        case .toOne(let entity):
            return .objectID(ObjectID(storeID: storeID, entityName: entity, primaryKey: statement.int64(at: index)))
        }
    }
}
