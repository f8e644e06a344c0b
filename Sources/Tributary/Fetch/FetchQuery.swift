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
    /// Per column, a payload-free code for the decoder's hot loop.
    private let codes: [UInt8]
    /// Per column, the destination entity of a to-one relationship (empty otherwise).
    private let destinations: [String]

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
        let grouping = try Self.grouping(of: request, table: table)
        compiler.aggregatesAllowed = grouping != nil
        var arguments: [AttributeValue] = []
        var names: [String] = []
        var columns: [Column] = []
        // Rows of a grouped, distinct or aggregate fetch stand for no one object: key 0.
        var selected = [grouping == nil ? "t0.\(table.key)" : "0"]
        if request.resultType == .dictionary || request.resultType == .managedObject {
            let wanted = request.propertiesToFetch ?? (table.entity.attributes.map(\.name) + table.entity.relationships.filter { !$0.isToMany }.map(\.name))
            for name in wanted {
                let scalar = try Self.property(name, table: table, compiler: &compiler)
                selected.append(scalar.sql)
                arguments += scalar.arguments
                switch scalar.kind {
                case .attribute(let type): columns.append(.attribute(type))
                case .toOne(let entity): columns.append(.toOne(entity: entity))
                }
                names.append(name)
            }
        }
        let distinct = grouping?.distinct == true ? "DISTINCT " : ""
        var sql = request.resultType == .count
            ? "SELECT count(*) FROM \(quote(table.name)) t0"
            : "SELECT \(distinct)\(selected.joined(separator: ", ")) FROM \(quote(table.name)) t0"
        if let predicate = request.predicate {
            compiler.aggregatesAllowed = false
            let fragment = try compiler.compile(predicate, table: table, alias: "t0")
            compiler.aggregatesAllowed = grouping != nil
            sql += " WHERE " + fragment.sql
            arguments += fragment.arguments
        }
        if let grouping {
            let clauses = try Self.groupClauses(grouping, table: table, compiler: &compiler)
            sql += clauses.sql
            arguments += clauses.arguments
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
                arguments += scalar.arguments
            }
            // Then by key, or for rows that stand for no object, by every column in turn.
            order += grouping == nil ? ["t0.\(table.key) ASC"] : names.indices.map { String($0 + 2) }
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
        self.codes = columns.map { column -> UInt8 in
            switch column {
            case .attribute(let type): return UInt8(AttributeType.allCases.firstIndex(of: type)!)
            case .toOne: return 255
            }
        }
        self.destinations = columns.map { column in
            if case .toOne(let entity) = column { return entity }
            return ""
        }
    }

    /// Steps `statement` and delivers rows in batches of `batchSize`.
    func read(_ statement: Statement, storeID: UUID, batchSize: Int, _ body: ([FetchedRow]) throws -> Void) throws {
        let width = codes.count
        var keys: [Int64] = []
        var values: [AttributeValue] = []
        keys.reserveCapacity(min(batchSize, 4096))
        values.reserveCapacity(min(batchSize, 4096) * width)
        func deliver() throws {
            let batch = RowBatch(layout: layout, storeID: storeID, entityName: entityName, keys: keys, values: values)
            keys.removeAll(keepingCapacity: true)
            values.removeAll(keepingCapacity: true)
            try body(batch.rows)
        }
        while try statement.step() {
            keys.append(statement.int64(at: 0))
            for i in 0..<width {
                values.append(decode(statement, at: i + 1, code: codes[i], column: i, storeID: storeID))
            }
            if keys.count == batchSize { try deliver() }
        }
        if !keys.isEmpty { try deliver() }
    }

    /// The value of property `column` in the statement's current row.
    @inline(__always)
    func value(of statement: Statement, column: Int, storeID: UUID) -> AttributeValue {
        decode(statement, at: column + 1, code: codes[column], column: column, storeID: storeID)
    }

    /// One call into the statement for the column's value (``Statement/column(at:)``); its
    /// class and contents are then read from the value itself.
    @inline(__always)
    private func decode(_ statement: Statement, at index: Int, code: UInt8, column: Int, storeID: UUID) -> AttributeValue {
        let value = statement.column(at: index)
        switch (code, value.storageClass) {
        case (_, .null): return .null
        case (0, .text): return .string(value.string)
        case (1, .integer): return .integer(value.int64)
        case (2, .real): return .double(value.double)
        case (3, .integer):
            let number = value.int64
            return number == 0 || number == 1 ? .bool(number == 1) : .integer(number)
        case (4, .real): return .date(Date(timeIntervalSince1970: value.double))
        // A to-one's column holding no integer (text another program wrote) names no object: nil, as history records it.
        case (255, let stored):
            return stored == .integer ? .objectID(ObjectID(storeID: storeID, entityName: destinations[column], primaryKey: value.int64)) : .null
        default: return Self.decode(statement, at: index, as: columns[column], storeID: storeID)
        }
    }

    /// A value as the attribute's type reads it (``AttributeValue/read(as:)``): what another
    /// program stored in a class the type does not hold (text in an integer column, 7 in a
    /// bool one, a blob or 42 in a text one) is given as stored, as history records it, not
    /// converted to 0, true or text; in a to-one's column, where it names no object, it is nil.
    static func decode(_ statement: Statement, at index: Int, as column: Column, storeID: UUID) -> AttributeValue {
        let value = statement.column(at: index)
        switch column {
        case .attribute(let type):
            return value.read(as: type)
        case .toOne(let entity):
            guard value.storageClass == .integer else { return .null }
            return .objectID(ObjectID(storeID: storeID, entityName: entity, primaryKey: value.int64))
        }
    }
}
