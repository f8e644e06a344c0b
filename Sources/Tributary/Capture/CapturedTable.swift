/// A table whose writes by other programs the capture triggers log: an entity's
/// table (key `_pk`) or a many-to-many join table (key `src`, `dst`).
struct CapturedTable: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case entity
        case join
    }

    /// Its number in the log's `t` codes (``CaptureLog/code(table:column:op:)``).
    let id: Int
    let name: String
    let kind: Kind
    /// The key columns, logged as `k0` (and `k1`).
    let keyColumns: [String]
    /// The columns whose updates are logged (one trigger each) and whose values a
    /// delete logs in `c0…`, in order: an entity's attributes and to-one keys.
    let columns: [String]
    /// Unique indexes, each a list of terms (column names, or SQL: ``UniqueIndexes``): an
    /// `INSERT OR REPLACE` that conflicts on one deletes the row in the way.
    let uniqueConstraints: [[String]]
    /// The numbers of a `WITHOUT ROWID` table's rows (its ``keyColumns`` is the rowid's name,
    /// which the triggers read through the map), or nil.
    var keyMap: KeyMap? = nil

    /// The capture of every table of `schema`, numbered from 1 in name order.
    static func all(in schema: StoreSchema) -> [CapturedTable] {
        var tables: [CapturedTable] = []
        for name in schema.tables.keys.sorted() {
            let table = schema.tables[name]!
            tables.append(CapturedTable(id: tables.count + 1, name: name, kind: .entity, keyColumns: [table.keyColumn],
                                        columns: table.dataColumns, uniqueConstraints: table.entity.uniquenessConstraints, keyMap: KeyMap(table.entity)))
            for relationship in table.entity.relationships {
                guard case .joinTable(let join, "src", _) = table.storage[relationship.name], join == "_\(name)_\(relationship.name)" else { continue }
                tables.append(CapturedTable(id: tables.count + 1, name: join, kind: .join, keyColumns: ["src", "dst"], columns: [], uniqueConstraints: []))
            }
        }
        return tables
    }
}
