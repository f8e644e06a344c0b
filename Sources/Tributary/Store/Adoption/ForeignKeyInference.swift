/// Reads an adopted database's foreign keys (`pragma_foreign_key_list`) as to-one
/// relationships: the second step of adopting it, once every table is an entity.
///
/// A single-column foreign key from an adopted table to an adopted table (itself too)
/// whose referenced column is that table's object key (its `INTEGER PRIMARY KEY`; a
/// `REFERENCES` without a column names the primary key), and whose column holds only
/// integers and NULLs, becomes a to-one relationship named after the column, so its
/// storage is the column itself: nothing is added to the table. Its inverse is a to-many
/// relationship on the destination, named after the source table (`notes` on `users`), or
/// after the table and the column (`notes_owner_id`) when the table has several such keys
/// to the destination or the name is taken (by a column of the destination too, the
/// to-one's own name included). The inverse's delete rule is the foreign key's `ON DELETE`:
/// `CASCADE` cascades, `SET NULL` nullifies unless the column is `NOT NULL`, and anything
/// else (`NO ACTION`, `RESTRICT`, `SET DEFAULT`) denies, since those leave the referencing
/// rows in place and Tributary would have to guess a value for them. The to-one is required
/// when the column is `NOT NULL`. A column in several foreign keys is the relationship of
/// the first declared that can be one. Every other foreign key stays an attribute, with a
/// note saying why.
struct ForeignKeyInference {
    /// One foreign key of a table, as the pragma lists it.
    private struct ForeignKey {
        let id: Int64
        let source: String
        let columns: [String]
        let table: String
        let referenced: [String?]
        let onDelete: String
    }

    /// A foreign key that becomes a relationship, with where it points.
    private struct Link {
        let key: ForeignKey
        let source: Int
        let destination: Int
    }

    var entities: [EntityDescription]
    var tables: [AdoptionReport.Table]

    /// Turns the foreign keys of `entities` that can be relationships into relationships,
    /// and notes on `tables` (same order) what became of each.
    mutating func link(on db: Connection) throws {
        var links: [Link] = []
        for index in entities.indices {
            for key in try foreignKeys(of: entities[index].name, on: db) {
                if let link = try self.link(key, from: index, besides: links, on: db) { links.append(link) }
            }
        }
        for link in links { add(link, sharing: links.filter { $0.source == link.source && $0.destination == link.destination }.count > 1) }
        for index in tables.indices {
            tables[index].attributes = entities[index].attributes.map(\.name)
            tables[index].relationships = entities[index].relationships.map(\.name)
        }
    }

    private func foreignKeys(of table: String, on db: Connection) throws -> [ForeignKey] {
        let statement = try db.makeStatement("SELECT id, \"from\", \"table\", \"to\", on_delete FROM pragma_foreign_key_list(?, 'main') ORDER BY id, seq")
        try statement.bind([.string(table)])
        var keys: [Int64: ForeignKey] = [:]
        while try statement.step() {
            let id = statement.int64(at: 0)
            let before = keys[id]
            keys[id] = ForeignKey(id: id, source: table, columns: (before?.columns ?? []) + [statement.string(at: 1)], table: statement.string(at: 2),
                                  referenced: (before?.referenced ?? []) + [statement.optionalString(at: 3)], onDelete: statement.string(at: 4))
        }
        // In column order, so that names given are the same however the keys were declared;
        // keys on one column in the order declared (the pragma numbers the last one 0).
        let position = Dictionary(entities.first { $0.name == table }?.attributes.enumerated().map { ($1.name, $0) } ?? [], uniquingKeysWith: { a, _ in a })
        return keys.values.sorted { ((position[$0.columns[0]] ?? .max), -$0.id) < ((position[$1.columns[0]] ?? .max), -$1.id) }
    }

    /// The relationship `key` can be, or nil with a note on the table saying why it cannot.
    private mutating func link(_ key: ForeignKey, from source: Int, besides links: [Link], on db: Connection) throws -> Link? {
        guard key.columns.count == 1, let column = key.columns.first else { return keep(key, "it is a composite key (a relationship has one column)") }
        guard entities[source].attribute(named: column) != nil else { return keep(key, "\(column) is not an attribute of \(key.source)") }
        if entities[source].declaredKey.contains(column) { return keep(key, "\(column) is part of the table's declared key") }
        guard let destination = entities.firstIndex(where: { $0.name.lowercased() == key.table.lowercased() }) else {
            return keep(key, "\(key.table) is not adopted")
        }
        let target = entities[destination]
        guard let tableKey = target.tableKey, !RowidName.contains(tableKey) else {
            return keep(key, "\(target.name) has no INTEGER PRIMARY KEY (its rows are keyed by their rowid, which VACUUM may renumber)")
        }
        if let referenced = key.referenced[0], referenced.lowercased() != tableKey.lowercased() {
            return keep(key, "it references \(target.name).\(referenced), not its INTEGER PRIMARY KEY \(tableKey)")
        }
        if let other = links.first(where: { $0.source == source && $0.key.columns == key.columns }) {
            return keep(key, "\(column) is in a foreign key to \(entities[other.destination].name) already, declared first")
        }
        let declared = try db.scalar("SELECT type FROM pragma_table_xinfo(?, 'main') WHERE name = ?", [.string(key.source), .string(column)])?.stringValue ?? ""
        guard SchemaInference.holdsIntegers(declared: declared) else { return keep(key, "\(column) is declared \(declared), not INTEGER") }
        if let value = try Self.nonKeyValue(column, of: key.source, on: db) {
            return keep(key, "\(column) holds \(value), which is not a key (a relationship's column holds integers and NULLs)")
        }
        return Link(key: key, source: source, destination: destination)
    }

    /// Notes on the key's table why `key` stays attributes; nil.
    private mutating func keep(_ key: ForeignKey, _ why: String) -> Link? {
        let source = entities.firstIndex { $0.name == key.source } ?? 0
        tables[source].notes.append("foreign key \(key.columns.joined(separator: ", ")) → \(key.table) stays \(key.columns.count == 1 ? "an attribute" : "attributes"): \(why)")
        return nil
    }

    /// A value of `column` that is neither an integer nor NULL (text such as `''`, a real, a
    /// blob), as SQL quotes it (at most 40 characters), or nil when there is none.
    private static func nonKeyValue(_ column: String, of table: String, on db: Connection) throws -> String? {
        let sql = "SELECT substr(quote(\(quote(column))), 1, 40) FROM \(quote(table)) WHERE typeof(\(quote(column))) NOT IN ('integer', 'null') LIMIT 1"
        return try db.scalar(sql)?.stringValue
    }

    /// Makes the link's attribute a to-one relationship and gives the destination its inverse.
    private mutating func add(_ link: Link, sharing: Bool) {
        let column = link.key.columns[0]
        guard let position = entities[link.source].attributes.firstIndex(where: { $0.name == column }) else { return }
        // Named while the column is still an attribute, so that the inverse of a key to its
        // own table never takes the to-one's name.
        let inverse = inverseName(link, sharing: sharing)
        let attribute = entities[link.source].attributes.remove(at: position)
        let rule = Self.deleteRule(link.key.onDelete, required: !attribute.isOptional)
        let source = entities[link.source].name, destination = entities[link.destination].name
        entities[link.source].relationships.append(RelationshipDescription(name: column, destinationEntity: destination, inverseName: inverse, isOptional: attribute.isOptional))
        entities[link.destination].relationships.append(RelationshipDescription(name: inverse, destinationEntity: source, inverseName: column, isToMany: true, deleteRule: rule))
        var note = "\(column) → \(destination) is a to-one relationship; its inverse is \(destination).\(inverse), delete rule \(rule.rawValue) (ON DELETE \(link.key.onDelete))"
        if rule == .deny && link.key.onDelete.uppercased() == "SET NULL" {
            note += ": \(column) is NOT NULL, so SQLite could not set it to NULL; a \(destination) object that \(source) rows refer to cannot be deleted through Tributary"
        }
        if let value = attribute.defaultValue { note += "; its default (\(value)) applies to other programs' inserts only" }
        tables[link.source].notes.append(note)
    }

    /// The source table's name, or the table's and the column's when the table has several
    /// keys to the destination or the name is taken there; numbered if that is taken too. A
    /// name the model would refuse (a table `_` makes `__a`, a prefix Tributary keeps for
    /// itself) becomes `inverse_` and the column's name: the name is Tributary's to choose.
    private func inverseName(_ link: Link, sharing: Bool) -> String {
        let destination = entities[link.destination]
        let taken = Set((destination.propertyNames + [destination.tableKey ?? ""]).map { $0.lowercased() })
        let source = entities[link.source].name
        var name = sharing || taken.contains(source.lowercased()) ? "\(source)_\(link.key.columns[0])" : source
        if !ManagedObjectModel.isAdoptableName(name) { name = "inverse_\(link.key.columns[0])" }
        let base = name
        var number = 2
        while taken.contains(name.lowercased()) {
            name = "\(base)_\(number)"
            number += 1
        }
        return name
    }

    /// The delete rule of the inverse: what deleting the referenced row does to the rows that
    /// reference it. `SET NULL` on a required (`NOT NULL`) column denies: SQLite would refuse the NULL.
    static func deleteRule(_ onDelete: String, required: Bool) -> DeleteRule {
        switch onDelete.uppercased() {
        case "CASCADE": return .cascade
        case "SET NULL": return required ? .deny : .nullify
        default: return .deny
        }
    }
}
