import Foundation

/// What a context needs to know about one entity, computed once per store:
/// its value slots (the table's data columns: attributes, then to-one
/// relationships whose foreign key lives in this table), its other
/// relationships ("links": to-many, and to-one whose key lives elsewhere),
/// and the SQL it reads and writes rows with.
final class ContextEntity: Sendable {
    /// How a relationship is held in memory.
    enum RelationshipKind: Sendable, Equatable {
        /// A to-one relationship stored in value slot `slot`.
        case slot(Int)
        /// A relationship stored elsewhere, at `link` among the links.
        case link(Int)
    }

    let index: Int
    let table: StoreSchema.Table
    var name: String { table.name }
    var entity: EntityDescription { table.entity }
    /// Slot names, in order: attributes then foreign-key to-ones.
    let slotNames: [String]
    /// Slot of each attribute or foreign-key to-one by name.
    let slotIndex: [String: Int]
    /// Number of attribute slots (the first slots).
    let attributeCount: Int
    /// Relationships stored elsewhere, in model order.
    let links: [RelationshipDescription]
    /// Where each relationship lives, by name.
    let relationshipKinds: [String: RelationshipKind]
    /// The relationship of each slot past the attributes.
    let slotRelationships: [RelationshipDescription]
    /// Fetch-query column kinds of the slots (for decoding rows).
    let columns: [FetchQuery.Column]
    /// Default value of each slot for a new object.
    let defaults: [AttributeValue]
    /// Type of each attribute slot.
    let attributeTypes: [AttributeType]
    /// The slots a save writes: all but derived attributes, which the store's triggers keep.
    let writableSlots: [Int]
    /// Whether the entity has derived attributes (its saved objects reload them).
    var hasDerivedAttributes: Bool { writableSlots.count != slotNames.count }

    /// `SELECT _version, slots… FROM t WHERE _pk = ?`
    let selectByKeySQL: String
    /// `SELECT _pk, _version, slots… FROM t` (add a WHERE clause).
    let selectAllSQL: String
    /// `INSERT INTO t (slots…) VALUES (?…)`
    let insertSQL: String

    init(index: Int, table: StoreSchema.Table) {
        self.index = index
        self.table = table
        slotNames = table.dataColumns
        var slotIndex: [String: Int] = [:]
        for (i, name) in slotNames.enumerated() { slotIndex[name] = i }
        self.slotIndex = slotIndex
        attributeCount = table.attributes.count
        slotRelationships = table.foreignKeys
        var links: [RelationshipDescription] = []
        var kinds: [String: RelationshipKind] = [:]
        for relationship in table.entity.relationships {
            if let slot = slotIndex[relationship.name], case .foreignKeyHere = table.storage[relationship.name]! {
                kinds[relationship.name] = .slot(slot)
            } else {
                kinds[relationship.name] = .link(links.count)
                links.append(relationship)
            }
        }
        self.links = links
        relationshipKinds = kinds
        columns = table.attributes.map { .attribute($0.type) } + table.foreignKeys.map { .toOne(entity: $0.destinationEntity) }
        attributeTypes = table.attributes.map(\.type)
        writableSlots = slotNames.indices.filter { $0 >= table.attributes.count || !table.attributes[$0].isDerived }
        let writable = writableSlots
        let validator = ValueValidator(table: table)
        // Defaults were checked when the model was made; one that does not convert stays nil.
        defaults = table.attributes.map { attribute in
            attribute.defaultValue.flatMap { try? validator.attributeValue($0, attribute, row: nil) } ?? .null
        } + table.foreignKeys.map { _ in .null }
        let columnList = slotNames.map { quote($0) }
        let selected = ([table.version()] + columnList).joined(separator: ", ")
        selectByKeySQL = "SELECT \(selected) FROM \(quote(table.name)) WHERE \(table.key) = ?"
        selectAllSQL = "SELECT \(table.key), \(selected) FROM \(quote(table.name))"
        let insertColumns = writable.map { columnList[$0] }
        insertSQL = insertColumns.isEmpty
            ? "INSERT INTO \(table.writtenTable) DEFAULT VALUES"
            : "INSERT INTO \(table.writtenTable) (\(insertColumns.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: insertColumns.count).joined(separator: ", ")))"
    }

    /// The attribute of slot `slot`, or nil for a relationship slot.
    func attribute(at slot: Int) -> AttributeDescription? {
        slot < attributeCount ? table.attributes[slot] : nil
    }

    /// `UPDATE t SET <slots in mask>, _version = _version + 1 WHERE _pk = ?` (no version on an adopted table).
    func updateSQL(mask: UInt64) -> String {
        var assignments: [String] = []
        for (i, name) in slotNames.enumerated() where mask & (1 << UInt64(i)) != 0 { assignments.append("\(quote(name)) = ?") }
        return "UPDATE \(table.writtenTable) SET \(assignments.joined(separator: ", "))\(table.versionBump) WHERE \(table.objectKey("= ?"))"
    }

    /// The key of the row just inserted with slot values `values`: its rowid, or a `WITHOUT
    /// ROWID` table's number, which its capture trigger gave the row's declared key.
    func insertedKey(of values: [AttributeValue], on db: Connection) throws -> Int64 {
        guard let map = table.keyMap else { return db.lastInsertRowID }
        guard let number = try map.number(of: map.keyColumns.map { slotIndex[$0].map { values[$0] } ?? .null }, on: db) else {
            throw TributaryError(.objectNotFound, "the row inserted into \(table.name) has no number in \(map.name)", location: table.name,
                                 hint: "its capture triggers may be missing: open the store again to reinstall them")
        }
        return number
    }

    /// Reads the slot values of the statement's current row, starting at column `first`.
    func readSlots(_ statement: Statement, from first: Int, storeID: UUID) -> [AttributeValue] {
        var values: [AttributeValue] = []
        values.reserveCapacity(columns.count)
        for (i, column) in columns.enumerated() {
            values.append(FetchQuery.decode(statement, at: first + i, as: column, storeID: storeID))
        }
        return values
    }

    /// The SQL giving the targets' keys of link `link` for one source key (bound once).
    func linkTargetsSQL(_ link: Int) -> String {
        let relationship = links[link]
        switch table.storage[relationship.name]! {
        case .foreignKeyOnDestination(let column):
            let key = table.destinationKey(relationship.name)
            return "SELECT \(key) FROM \(quote(relationship.destinationEntity)) WHERE \(quote(column)) = ? ORDER BY \(key)"
        case .joinTable(let joinTable, let sourceColumn, let destinationColumn):
            return "SELECT \(quote(destinationColumn)) FROM \(quote(joinTable)) WHERE \(quote(sourceColumn)) = ? ORDER BY \(quote(destinationColumn))"
        case .foreignKeyHere(let column):
            return "SELECT \(quote(column)) FROM \(quote(table.name)) WHERE \(table.key) = ? AND \(quote(column)) IS NOT NULL"
        }
    }

    /// The SQL giving (source key, target key) pairs of link `link` for a JSON array of source keys.
    func linkPairsSQL(_ link: Int) -> String {
        let relationship = links[link]
        let inList = "IN (SELECT value FROM json_each(?))"
        switch table.storage[relationship.name]! {
        case .foreignKeyOnDestination(let column):
            return "SELECT \(quote(column)), \(table.destinationKey(relationship.name)) FROM \(quote(relationship.destinationEntity)) WHERE \(quote(column)) \(inList)"
        case .joinTable(let joinTable, let sourceColumn, let destinationColumn):
            return "SELECT \(quote(sourceColumn)), \(quote(destinationColumn)) FROM \(quote(joinTable)) WHERE \(quote(sourceColumn)) \(inList)"
        case .foreignKeyHere(let column):
            return "SELECT \(table.key), \(quote(column)) FROM \(quote(table.name)) WHERE \(table.key) \(inList) AND \(quote(column)) IS NOT NULL"
        }
    }
}

/// Every entity's ``ContextEntity`` of one store, shared by its contexts.
final class ContextSchema: Sendable {
    let entities: [ContextEntity]
    let byName: [String: ContextEntity]

    init(schema: StoreSchema) {
        var entities: [ContextEntity] = []
        for (i, entity) in schema.model.entities.enumerated() {
            entities.append(ContextEntity(index: i, table: schema.tables[entity.name]!))
        }
        self.entities = entities
        byName = Dictionary(uniqueKeysWithValues: entities.map { ($0.name, $0) })
    }

    func entity(_ name: String) throws -> ContextEntity {
        guard let entity = byName[name] else {
            throw TributaryError(.unknownEntity, "unknown entity '\(name)'", hint: "the model has \(entities.map(\.name).joined(separator: ", "))")
        }
        return entity
    }
}
