import Foundation

/// Runs a ``BatchInsertRequest`` inside the writer's transaction: one cached
/// upsert statement per set of keys given, values bound by type, no objects.
struct BatchInserter {
    let store: PersistentStore
    let table: StoreSchema.Table
    let validator: ValueValidator
    /// Attributes then owned to-one relationships: the table's data columns.
    private let columnNames: [String]
    /// Relationships whose links live elsewhere (to-many, inverse side of one-to-one).
    private let linkRelationships: [RelationshipDescription]
    private var statements: [UInt64: Statement] = [:]

    init(store: PersistentStore, entityName: String) throws {
        self.store = store
        let table = try store.schema.table(entityName)
        self.table = table
        self.validator = ValueValidator(table: table)
        self.columnNames = table.dataColumns
        self.linkRelationships = table.entity.relationships.filter { relationship in
            if case .foreignKeyHere = table.storage[relationship.name]! { return false }
            return true
        }
    }

    /// Inserts or updates every object; throws (and the caller's transaction rolls back) on the first bad one.
    mutating func run(_ objects: [[String: AttributeValue]], resultType: BatchResultType, on db: Connection) throws -> BatchResult {
        var result = BatchResult()
        var values = [AttributeValue](repeating: .null, count: columnNames.count)
        let attributes = table.attributes
        let foreignKeys = table.foreignKeys
        let hasUnique = !table.entity.uniquenessConstraints.isEmpty
        for (row, object) in objects.enumerated() {
            var mask: UInt64 = 0
            var matched = 0
            for (i, attribute) in attributes.enumerated() {
                if let given = object[attribute.name] {
                    matched += 1
                    mask |= 1 << UInt64(i)
                    values[i] = try validator.attributeValue(given, attribute, row: row)
                } else if let value = attribute.defaultValue {
                    values[i] = try validator.attributeValue(value, attribute, row: row)
                } else if attribute.isOptional {
                    values[i] = .null
                } else {
                    throw validator.missing(attribute.name, row: row)
                }
            }
            for (j, relationship) in foreignKeys.enumerated() {
                let i = attributes.count + j
                if let given = object[relationship.name] {
                    matched += 1
                    mask |= 1 << UInt64(i)
                    values[i] = try validator.targetKey(given, relationship, row: row)
                } else if relationship.isOptional {
                    values[i] = .null
                } else {
                    throw validator.missing(relationship.name, row: row)
                }
            }
            var links: [(RelationshipDescription, AttributeValue)] = []
            for relationship in linkRelationships {
                if let given = object[relationship.name] {
                    matched += 1
                    links.append((relationship, given))
                }
            }
            if matched != object.count {
                let known = Set(table.entity.propertyNames)
                let unknown = object.keys.sorted().first { !known.contains($0) } ?? "?"
                throw validator.unknownKey(unknown, row: row)
            }
            let returning = hasUnique
            let statement = try self.statement(mask: mask, returning: returning, on: db)
            for (i, value) in values.enumerated() { try statement.bind(value, at: Int32(i + 1)) }
            var primaryKey: Int64 = 0
            var isNew = true
            do {
                if returning {
                    if try statement.step() {
                        primaryKey = statement.int64(at: 0)
                        isNew = statement.int64(at: 1) == 1
                    }
                    try statement.run()
                } else {
                    try statement.run()
                    if !hasUnique { primaryKey = db.lastInsertRowID }
                }
            } catch let error as SQLiteError {
                throw UniqueViolation.translate(error, table: table, place: validator.place(row))
            }
            statement.reset()
            result.count += 1
            do {
                if isNew { result.inserted += 1 } else { result.updated += 1 }
                if resultType == .objectIDs { result.objectIDs.append(store.objectID(entity: table.name, primaryKey: primaryKey)) }
                if isNew {
                    for (relationship, value) in links {
                        try link(primaryKey, relationship, value, row: row, on: db)
                    }
                }
            }
        }
        return result
    }

    /// The upsert statement for rows giving the keys in `mask`.
    private mutating func statement(mask: UInt64, returning: Bool, on db: Connection) throws -> Statement {
        let key = mask | (returning ? 1 << 63 : 0)
        if let statement = statements[key] { return statement }
        let columns = columnNames.map(quote).joined(separator: ", ")
        let marks = Array(repeating: "?", count: columnNames.count).joined(separator: ", ")
        var sql = "INSERT INTO \(quote(table.name)) (\(columns)) VALUES (\(marks))"
        var updates = columnNames.enumerated().filter { mask & (1 << UInt64($0.offset)) != 0 }.map { "\(quote($0.element)) = excluded.\(quote($0.element))" }
        updates.append("\"_version\" = \"_version\" + 1")
        for constraint in table.entity.uniquenessConstraints {
            sql += " ON CONFLICT (\(constraint.map(quote).joined(separator: ", "))) DO UPDATE SET \(updates.joined(separator: ", "))"
        }
        if returning { sql += " RETURNING \"_pk\", \"_version\"" }
        let statement = try db.makeStatement(sql)
        statements[key] = statement
        return statement
    }

    /// Sets a relationship stored outside this row, for a newly inserted row.
    private func link(_ key: Int64, _ relationship: RelationshipDescription, _ value: AttributeValue, row: Int, on db: Connection) throws {
        switch table.storage[relationship.name]! {
        case .joinTable(let joinTable, let sourceColumn, let destinationColumn):
            for target in try validator.targetKeys(value, relationship, row: row) {
                try db.execute("INSERT OR IGNORE INTO \(quote(joinTable)) (\(quote(sourceColumn)), \(quote(destinationColumn))) VALUES (?, ?)", [.integer(key), .integer(target)])
            }
        case .foreignKeyOnDestination(let column):
            let targets = relationship.isToMany
                ? try validator.targetKeys(value, relationship, row: row)
                : [try validator.targetKey(value, relationship, row: row)].compactMap(\.integerValue)
            if !relationship.isToMany {
                try db.execute("UPDATE \(quote(relationship.destinationEntity)) SET \(quote(column)) = NULL, \"_version\" = \"_version\" + 1 WHERE \(quote(column)) = ?", [.integer(key)])
            }
            for target in targets {
                try db.execute("UPDATE \(quote(relationship.destinationEntity)) SET \(quote(column)) = ?, \"_version\" = \"_version\" + 1 WHERE \"_pk\" = ?", [.integer(key), .integer(target)])
            }
        case .foreignKeyHere:
            break
        }
    }
}

/// Turns SQLite's unique-constraint failures into errors naming the entity and attributes.
enum UniqueViolation {
    static func translate(_ error: SQLiteError, table: StoreSchema.Table, place: String) -> Error {
        guard error.extendedCode == SQLiteError.constraintUnique || error.extendedCode == SQLiteError.constraintPrimaryKey else { return error }
        // SQLite says "UNIQUE constraint failed: Post.externalID, Post.title".
        let columns = error.message.components(separatedBy: ": ").last?
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).split(separator: ".").last.map(String.init) ?? "" } ?? []
        let names = columns.joined(separator: ", ")
        return TributaryError(.uniqueConstraint, "two \(table.name) rows would have the same \(names)", location: place,
                              hint: "\(names) must be unique in \(table.name); change the value or update the existing row instead")
    }
}
