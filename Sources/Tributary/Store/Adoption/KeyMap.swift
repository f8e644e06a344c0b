/// The object IDs of a `WITHOUT ROWID` table's rows (``EntityDescription/isWithoutRowid``).
///
/// Such a table has no rowid to identify its rows, and adoption adds nothing to the user's
/// tables, so Tributary numbers them in a table of its own, `_tributary_keys_<table>`: one
/// row per declared key (`_tributary_id INTEGER PRIMARY KEY`, then the key's columns with
/// the key's collations, unique together). Its numbers survive `VACUUM`.
///
/// - The capture triggers (``CaptureTriggers``) number a key when they log its insert, move
///   the number when the key changes (the object is followed, as a text key's row keeps its
///   rowid), and keep it after a delete: the same key inserted again is the same object, as
///   with a reused `INTEGER PRIMARY KEY`.
/// - Tributary's connections see the table through a TEMP view of the same name that adds
///   the number under the rowid's name (``EntityDescription/tableKey``), so every read that
///   works on a rowid table works on it.
/// - Tributary writes the table as another program does, with the stored triggers on
///   (`PersistentStore.writingThroughCaptureTriggers(on:_:)`): any save or batch request
///   whose entity is the table, or whose relationships may reach it (a cascade, a link), so
///   `import`, `update`, `delete` and `replay` too. Its pre-update hook could not tell which
///   object such a write changed. Those writes go to `main`'s table past the view; one that
///   reached the view would fail there, as SQLite cannot write a view, and is said in one line
///   (``refusal(ofWriteFailing:)``).
package struct KeyMap: Sendable, Equatable {
    /// The user's table.
    let table: String
    /// Its `PRIMARY KEY`'s columns, in key order (``EntityDescription/declaredKey``).
    let keyColumns: [String]
    /// The name the numbers go by in reads (``EntityDescription/tableKey``: `rowid`).
    let idName: String

    static let prefix = "_tributary_keys_"
    static let idColumn = "_tributary_id"

    /// The map of `entity`'s table, or nil when it has a rowid.
    init?(_ entity: EntityDescription) {
        guard entity.isWithoutRowid, let key = entity.tableKey, !entity.declaredKey.isEmpty else { return nil }
        (table, keyColumns, idName) = (entity.name, entity.declaredKey, key)
    }

    /// The map's table name.
    var name: String { Self.prefix + table }

    /// Makes the map when it is missing, and numbers the keys of rows that have none (every
    /// row, for a new map): at adoption, and when the capture triggers are installed again
    /// (keys inserted while another program had dropped them).
    func prepare(on db: Connection, fill: Bool) throws {
        let exists = try db.scalar("SELECT count(*) FROM main.sqlite_master WHERE type = 'table' AND name = ?", [.string(name)])?.integerValue ?? 0 > 0
        if !exists {
            let collations = try self.collations(on: db)
            let columns = keyColumns.map { "\(quote($0)) COLLATE \(quote(collations[$0] ?? "BINARY"))" }.joined(separator: ", ")
            try db.execute("CREATE TABLE main.\(quote(name)) (\(quote(Self.idColumn)) INTEGER PRIMARY KEY, \(columns), UNIQUE (\(keys)))")
        }
        if fill || !exists {
            try db.execute("INSERT OR IGNORE INTO main.\(quote(name)) (\(keys)) SELECT \(keys) FROM main.\(quote(table))")
        }
    }

    /// The collation of each key column, as the table's key compares it.
    private func collations(on db: Connection) throws -> [String: String] {
        let statement = try db.makeStatement("""
            SELECT x.name, x.coll FROM pragma_index_list(?1, 'main') AS l, pragma_index_xinfo(l.name, 'main') AS x
            WHERE l.origin = 'pk' AND x.key = 1
            """)
        try statement.bind([.string(table)])
        var collations: [String: String] = [:]
        while try statement.step() { collations[statement.string(at: 0)] = statement.string(at: 1) }
        return collations
    }

    private var keys: String { keyColumns.map(quote).joined(separator: ", ") }
    /// The condition that a row's key is the one bound, a `?` per column in key order.
    private var boundKey: String { keyColumns.map { "\(quote($0)) = ?" }.joined(separator: " AND ") }

    /// The condition that the row at hand (the map's, or the table's in a query of it: the key's
    /// columns unqualified) has the key of `other` (`NEW`, `OLD`, the table's name).
    func match(_ other: String) -> String {
        keyColumns.map { "\(quote($0)) = \(other).\(quote($0))" }.joined(separator: " AND ")
    }

    /// The condition that a row of the table (its columns unqualified) has a key whose number
    /// meets `condition` (SQL following the number, as `IN (…)` or `= ?`).
    func numbered(_ condition: String) -> String {
        "(\(keys)) IN (SELECT \(keys) FROM main.\(quote(name)) WHERE \(quote(Self.idColumn)) \(condition))"
    }

    /// The number of the row whose key is `key` (values in ``keyColumns`` order), read
    /// through the table's view; nil when there is no such row.
    func number(of key: [AttributeValue], on db: Connection) throws -> Int64? {
        try db.scalar("SELECT \(quote(idName)) FROM \(quote(table)) WHERE \(boundKey)", key)?.integerValue
    }

    /// Gives `key` the number `number` (a replica taking its source's), unless the key has
    /// one; returns whether the key holds `number` now.
    func claim(_ number: Int64, for key: [AttributeValue], on db: Connection) throws -> Bool {
        let marks = Array(repeating: "?", count: key.count).joined(separator: ", ")
        try db.execute("INSERT INTO main.\(quote(name)) (\(quote(Self.idColumn)), \(keys)) VALUES (?, \(marks)) ON CONFLICT DO NOTHING", [.integer(number)] + key)
        let held = try db.scalar("SELECT \(quote(Self.idColumn)) FROM main.\(quote(name)) WHERE \(boundKey)", key)
        return held?.integerValue == number
    }

    /// SQL giving the number of the key `row` has (`NEW`, `OLD`, or the table's name in a
    /// query of it); NULL when it has none. Unqualified, for use in the table's triggers.
    func id(of row: String) -> String {
        "(SELECT \(quote(Self.idColumn)) FROM \(quote(name)) WHERE \(match(row)))"
    }

    /// The statement a trigger runs to number a new key; a key seen before keeps its number.
    /// It cannot conflict: a conflict clause in it would give way to the writing statement's
    /// (`INSERT OR ABORT` would make a kept number fail the write).
    var numberNew: String {
        "INSERT INTO \(quote(name)) (\(keys)) SELECT \(keyColumns.map { "NEW.\(quote($0))" }.joined(separator: ", ")) WHERE NOT EXISTS (SELECT 1 FROM \(quote(name)) WHERE \(match("NEW")));"
    }

    /// The statements a trigger runs when a row's key changed: the number follows the row
    /// (a number the new key kept from a row gone before is dropped first).
    var moveNumber: String {
        let assignments = keyColumns.map { "\(quote($0)) = NEW.\(quote($0))" }.joined(separator: ", ")
        return "DELETE FROM \(quote(name)) WHERE \(match("NEW")); UPDATE \(quote(name)) SET \(assignments) WHERE \(match("OLD"));"
    }

    /// The TEMP view through which Tributary's connections read the table. (No `INSTEAD OF`
    /// trigger could refuse writes through it: with stored triggers off, as on a store's
    /// writer, SQLite runs no trigger of the TEMP schema's own objects.)
    var temporaryStatements: [String] {
        let on = keyColumns.map { "m.\(quote($0)) = t.\(quote($0))" }.joined(separator: " AND ")
        return ["CREATE TEMP VIEW \(quote(table)) AS SELECT m.\(quote(Self.idColumn)) AS \(quote(idName)), t.* FROM main.\(quote(table)) AS t JOIN main.\(quote(name)) AS m ON \(on)"]
    }

    /// Drops the maps of tables no longer adopted (gone, excluded): numbers they come back
    /// with start afresh, as their capture does.
    static func dropUnused(keeping maps: [KeyMap], on db: Connection) throws {
        let statement = try db.makeStatement("SELECT name FROM main.sqlite_master WHERE type = 'table' AND substr(name, 1, \(prefix.count)) = ?")
        try statement.bind([.string(prefix)])
        var unused: [String] = []
        while try statement.step() { unused.append(statement.string(at: 0)) }
        for name in unused where !maps.contains(where: { $0.name == name }) { try db.execute("DROP TABLE main.\(quote(name))") }
    }

    /// The refusal of a write that reached a `WITHOUT ROWID` table's view (no write path of
    /// Tributary's is known to), which SQLite fails with "cannot modify V because it is a
    /// view" (the only views a store writes to are these); nil for another error.
    static func refusal(ofWriteFailing error: SQLiteError) -> TributaryError? {
        let (head, tail) = ("cannot modify ", " because it is a view")
        let message = error.message
        guard message.hasPrefix(head), message.hasSuffix(tail), message.count > head.count + tail.count else { return nil }
        let table = String(message.dropFirst(head.count).dropLast(tail.count))
        return TributaryError(.invalidInput, "'\(table)' is a WITHOUT ROWID table, which Tributary writes past its view, and this write reached the view", location: table,
                              hint: "write the \(table) objects through a save or a batch request on \(table) (tributary update, delete), or with another program; report the write that reached the view")
    }

    /// The maps of `model`'s `WITHOUT ROWID` tables.
    static func all(in model: ManagedObjectModel) -> [KeyMap] {
        model.entities.compactMap(KeyMap.init)
    }
}
