/// How a model is laid out in SQLite: one table per entity (`_pk`, `_version`,
/// one column per attribute and per owned to-one relationship) and one join
/// table per many-to-many relationship.
struct StoreSchema: Sendable {
    /// Where a relationship's links live.
    enum Storage: Sendable, Equatable {
        /// A column of this entity's table holds the destination's primary key.
        case foreignKeyHere(column: String)
        /// A column of the destination's table holds this entity's primary key.
        case foreignKeyOnDestination(column: String)
        /// A join table: `sourceColumn` holds this entity's key, `destinationColumn` the destination's.
        case joinTable(table: String, sourceColumn: String, destinationColumn: String)
    }

    /// One entity's table.
    struct Table: Sendable {
        let entity: EntityDescription
        /// Attribute columns, in model order.
        let attributes: [AttributeDescription]
        /// Owned to-one relationships (foreign-key columns), in model order.
        let foreignKeys: [RelationshipDescription]
        /// Storage of every relationship by name.
        let storage: [String: Storage]
        /// Column index (after `_pk`) of every attribute and owned to-one relationship.
        let columnIndex: [String: Int]
        /// The key column of each relationship's adopted destination table (its
        /// ``EntityDescription/tableKey``), by relationship name; absent for a table Tributary
        /// made, keyed by `_pk` and versioned.
        let destinationKeys: [String: String]
        /// The numbering of each relationship's destination that is a `WITHOUT ROWID` table, by
        /// relationship name (``KeyMap``).
        let destinationMaps: [String: KeyMap]
        /// A `WITHOUT ROWID` table's numbering (``KeyMap``); nil for a table with rowids.
        let keyMap: KeyMap?
        /// Whether a write of this table may change a `WITHOUT ROWID` table's rows (its own, or
        /// through a link, a nullify or a cascade: `markReachesWithoutRowid`): such a write runs
        /// through the capture triggers (`PersistentStore.writingThroughCaptureTriggers(on:_:)`).
        fileprivate(set) var reachesWithoutRowid = false

        var name: String { entity.name }
        /// The column identifying a row: `_pk`, or an adopted table's own key (``EntityDescription/tableKey``).
        var keyColumn: String { entity.tableKey ?? "_pk" }
        /// ``keyColumn`` quoted for SQL.
        var key: String { entity.tableKey.map(quote) ?? "\"_pk\"" }
        /// Whether an adopted table has no key column: rows are identified by their rowid.
        var isKeyedByRowid: Bool { RowidName.contains(keyColumn) }
        /// Whether rows carry Tributary's `_version` (adopted tables do not).
        var isVersioned: Bool { entity.tableKey == nil }
        /// `, "_version" = "_version" + 1` for an `UPDATE`'s assignments of a versioned table, else nothing.
        var versionBump: String { isVersioned ? ", \"_version\" = \"_version\" + 1" : "" }
        /// An `UPDATE`'s or upsert's assignments, joined, with the version bump of a versioned
        /// table; an unversioned table with nothing to set sets its key (a `WITHOUT ROWID`
        /// table's first key column) to itself.
        func assignments(_ list: [String]) -> String {
            let itself = entity.isWithoutRowid ? quote(entity.declaredKey[0]) : key
            let all = list + (isVersioned ? ["\"_version\" = \"_version\" + 1"] : list.isEmpty ? ["\(itself) = \(itself)"] : [])
            return all.joined(separator: ", ")
        }
        /// The row's version in a `SELECT` (`alias."_version"`, or 1 for a table without versions).
        func version(_ alias: String? = nil) -> String { isVersioned ? (alias.map { "\($0)." } ?? "") + "\"_version\"" : "1" }
        /// Where Tributary's own statements write the table: its name, or a `WITHOUT ROWID`
        /// table's own in `main`, past the TEMP view of that name that reads go through.
        var writtenTable: String { Self.written(name, numbered: entity.isWithoutRowid) }
        /// The condition, on a row of ``writtenTable`` (columns unqualified), that its object's
        /// key meets `condition` (SQL following the key, as `IN (…)` or `= ?`).
        func objectKey(_ condition: String) -> String { keyMap?.numbered(condition) ?? "\(key) \(condition)" }
        /// Attribute and foreign-key column names, in order.
        var dataColumns: [String] { attributes.map(\.name) + foreignKeys.map(\.name) }
        /// The destination's key column of relationship `name`, quoted for SQL.
        func destinationKey(_ name: String) -> String { quote(destinationKeys[name] ?? "_pk") }
        /// Where a write of relationship `name`'s destination rows goes (its ``writtenTable``).
        func destinationTable(_ name: String, _ entity: String) -> String { Self.written(entity, numbered: destinationMaps[name] != nil) }
        /// `name` quoted, in `main` when it is a `WITHOUT ROWID` table's (`numbered`): past the
        /// TEMP view of that name that reads go through.
        static func written(_ name: String, numbered: Bool) -> String { numbered ? "main.\(quote(name))" : quote(name) }
        /// The condition, on a row of ``destinationTable(_:_:)``, that its object's key meets `condition`.
        func destinationObjectKey(_ name: String, _ condition: String) -> String {
            destinationMaps[name]?.numbered(condition) ?? "\(destinationKey(name)) \(condition)"
        }
        /// `, "_version" = "_version" + 1` when the destination of relationship `name` is a
        /// versioned table (one Tributary made), else nothing.
        func destinationVersionBump(_ name: String) -> String {
            destinationKeys[name] == nil ? ", \"_version\" = \"_version\" + 1" : ""
        }
    }

    let model: ManagedObjectModel
    let tables: [String: Table]
    /// Tables on which derived attributes have `UPDATE` triggers (see ``DerivedAttributeTriggers/tablesWithUpdateTriggers()``).
    private(set) var tablesWithUpdateTriggers: Set<String> = []

    init(model: ManagedObjectModel) {
        self.model = model
        var tables: [String: Table] = [:]
        for entity in model.entities {
            var storage: [String: Storage] = [:]
            var foreignKeys: [RelationshipDescription] = []
            var destinationKeys: [String: String] = [:]
            var destinationMaps: [String: KeyMap] = [:]
            for relationship in entity.relationships {
                let destination = model.entity(named: relationship.destinationEntity)!
                destinationKeys[relationship.name] = destination.tableKey
                destinationMaps[relationship.name] = KeyMap(destination)
                let inverse = destination.relationship(named: relationship.inverseName)!
                let thisFirst = (entity.name, relationship.name) <= (destination.name, inverse.name)
                switch (relationship.isToMany, inverse.isToMany) {
                case (false, true):
                    storage[relationship.name] = .foreignKeyHere(column: relationship.name)
                    foreignKeys.append(relationship)
                case (true, false):
                    storage[relationship.name] = .foreignKeyOnDestination(column: inverse.name)
                case (false, false):
                    if thisFirst {
                        storage[relationship.name] = .foreignKeyHere(column: relationship.name)
                        foreignKeys.append(relationship)
                    } else {
                        storage[relationship.name] = .foreignKeyOnDestination(column: inverse.name)
                    }
                case (true, true):
                    let table = thisFirst ? "_\(entity.name)_\(relationship.name)" : "_\(destination.name)_\(inverse.name)"
                    storage[relationship.name] = thisFirst
                        ? .joinTable(table: table, sourceColumn: "src", destinationColumn: "dst")
                        : .joinTable(table: table, sourceColumn: "dst", destinationColumn: "src")
                }
            }
            var columnIndex: [String: Int] = [:]
            for (i, name) in (entity.attributes.map(\.name) + foreignKeys.map(\.name)).enumerated() { columnIndex[name] = i }
            tables[entity.name] = Table(entity: entity, attributes: entity.attributes, foreignKeys: foreignKeys, storage: storage, columnIndex: columnIndex,
                                       destinationKeys: destinationKeys, destinationMaps: destinationMaps, keyMap: KeyMap(entity))
        }
        Self.markReachesWithoutRowid(&tables)
        self.tables = tables
        if model.entities.contains(where: { $0.attributes.contains(where: \.isDerived) }) {
            tablesWithUpdateTriggers = DerivedAttributeTriggers(schema: self).tablesWithUpdateTriggers()
        }
    }

    /// Marks the tables whose writes may change a `WITHOUT ROWID` table's rows: such a table
    /// itself; one whose relationship's links live in such a table's column (a link, or the
    /// nullify of a delete, writes them there); and one whose delete cascades to a table
    /// marked so. Only these writes pay for the capture triggers.
    private static func markReachesWithoutRowid(_ tables: inout [String: Table]) {
        let numbered = Set(tables.values.filter(\.entity.isWithoutRowid).map(\.name))
        var reaching = Set(tables.values.filter { table in
            numbered.contains(table.name) || table.entity.relationships.contains { relationship in
                guard case .foreignKeyOnDestination = table.storage[relationship.name] else { return false }
                return numbered.contains(relationship.destinationEntity)
            }
        }.map(\.name))
        var changed = !reaching.isEmpty
        while changed {
            let cascading = tables.values.filter { table in
                !reaching.contains(table.name) && table.entity.relationships.contains { $0.deleteRule == .cascade && reaching.contains($0.destinationEntity) }
            }
            reaching.formUnion(cascading.map(\.name))
            changed = !cascading.isEmpty
        }
        for name in reaching { tables[name]?.reachesWithoutRowid = true }
    }

    /// Whether the store is an adopted database (its tables made by another program).
    var isAdopted: Bool { model.entities.contains { $0.tableKey != nil } }

    func table(_ entity: String) throws -> Table {
        guard let table = tables[entity] else {
            throw TributaryError(.unknownEntity, "unknown entity '\(entity)'", hint: "the model has \(model.entities.map(\.name).joined(separator: ", "))")
        }
        return table
    }

    // MARK: DDL

    /// Statements creating one entity's table and indexes.
    func createStatements(for entity: EntityDescription) -> [String] {
        let table = tables[entity.name]!
        // An adopted table's model (replayed into a new store) keeps its key and has no version.
        var columns = table.isVersioned ? ["\"_pk\" INTEGER PRIMARY KEY", "\"_version\" INTEGER NOT NULL DEFAULT 1"]
            : table.isKeyedByRowid && !table.attributes.isEmpty ? [] : ["\(table.key) INTEGER PRIMARY KEY"]
        columns += table.attributes.map { "\(quote($0.name)) \($0.type.sqlType)\(DerivedAttributeTriggers.columnDefault($0, canBeNonConstant: true))" }
        columns += table.foreignKeys.map { "\(quote($0.name)) INTEGER" }
        return ["CREATE TABLE \(quote(entity.name)) (\(columns.joined(separator: ", ")))"] + indexStatements(for: entity)
    }

    /// Statements creating one entity's indexes: foreign keys, uniqueness constraints, fetch indexes.
    func indexStatements(for entity: EntityDescription) -> [String] {
        let table = tables[entity.name]!
        return table.foreignKeys.map { foreignKeyIndex(entity.name, $0.name) }
            + entity.uniquenessConstraints.map { uniqueIndex(entity.name, $0) }
            + entity.indexes.map { plainIndex(entity.name, $0) }
    }

    /// The names of the indexes ``indexStatements(for:)`` creates.
    func indexNames(of entity: EntityDescription) -> [String] {
        let table = tables[entity.name]!
        return table.foreignKeys.map { "\(entity.name)_fk_\($0.name)" }
            + entity.uniquenessConstraints.map { "\(entity.name)_unique_\($0.joined(separator: "_"))" }
            + entity.indexes.map { "\(entity.name)_index_\($0.joined(separator: "_"))" }
    }

    /// The index of a join table, by the pairs' destination.
    func joinTableIndex(_ table: String) -> String {
        "CREATE INDEX \(quote(table + "_dst")) ON \(quote(table)) (\"dst\", \"src\")"
    }

    /// Statements creating the join tables an entity owns.
    func joinTableStatements(for entity: EntityDescription) -> [String] {
        var statements: [String] = []
        for relationship in entity.relationships {
            guard case .joinTable(let name, "src", _) = tables[entity.name]!.storage[relationship.name] else { continue }
            guard name == "_\(entity.name)_\(relationship.name)" else { continue }
            statements.append("CREATE TABLE \(quote(name)) (\"src\" INTEGER NOT NULL, \"dst\" INTEGER NOT NULL, PRIMARY KEY (\"src\", \"dst\")) WITHOUT ROWID")
            statements.append(joinTableIndex(name))
        }
        return statements
    }

    func foreignKeyIndex(_ entity: String, _ column: String) -> String {
        "CREATE INDEX \(quote("\(entity)_fk_\(column)")) ON \(quote(entity)) (\(quote(column)))"
    }

    func uniqueIndex(_ entity: String, _ names: [String]) -> String {
        "CREATE UNIQUE INDEX \(quote("\(entity)_unique_\(names.joined(separator: "_"))")) ON \(quote(entity)) (\(names.map(quote).joined(separator: ", ")))"
    }

    func plainIndex(_ entity: String, _ names: [String]) -> String {
        "CREATE INDEX \(quote("\(entity)_index_\(names.joined(separator: "_"))")) ON \(quote(entity)) (\(names.map(quote).joined(separator: ", ")))"
    }
}

/// An SQL identifier in double quotes.
func quote(_ identifier: String) -> String {
    // Most names hold no quote: skip Foundation's search and replace (slow on Linux), which
    // was most of the time of a one-row batch request.
    guard identifier.utf8.contains(0x22) else { return "\"" + identifier + "\"" }
    return "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}
