import Foundation

/// Installs and repairs the capture triggers of a store's tables, and keeps the list
/// of captured tables (with the columns their log rows number) in
/// `_tributary_capture_table`, so that rows logged before a migration are still read
/// with the columns they were written with.
enum CaptureInstaller {
    /// The captured tables as recorded (for folding rows logged under them), keyed as
    /// `schema` keys them.
    static func recorded(on db: Connection, schema: StoreSchema? = nil) throws -> [CapturedTable] {
        let statement = try db.makeStatement("SELECT id, name, kind, columns, uniques FROM \(CaptureLog.tables) ORDER BY id")
        var tables: [CapturedTable] = []
        while try statement.step() {
            let kind: CapturedTable.Kind = statement.string(at: 2) == "join" ? .join : .entity
            tables.append(CapturedTable(id: Int(statement.int64(at: 0)), name: statement.string(at: 1), kind: kind,
                                        keyColumns: kind == .join ? ["src", "dst"] : [schema?.tables[statement.string(at: 1)]?.keyColumn ?? "_pk"],
                                        columns: decode(statement.string(at: 3)) as [String]? ?? [],
                                        uniqueConstraints: decode(statement.string(at: 4)) as [[String]]? ?? [],
                                        keyMap: (schema?.tables[statement.string(at: 1)]?.entity).flatMap(KeyMap.init)))
        }
        return tables
    }

    /// What ``install(on:schema:)`` found and did.
    struct Installed {
        /// Every captured table.
        var tables: [CapturedTable]
        /// Tables captured before, with the same columns, whose triggers were missing or
        /// not as installed (another program dropped or altered them): its writes to them
        /// meanwhile may not be recorded. Their triggers are installed again.
        var drifted: [String]
        /// Tables of an adopted database's model that another program dropped: left out
        /// until the database is adopted again.
        var missing: [String] = []
        /// Those of `missing` still there, left out because another program gave them a
        /// column named `rowid`, which hides the rowid that identifies their rows.
        var hidden: [String] = []
        /// Tables of an adopted database whose columns another program changed, each with
        /// what changed (`t (v renamed vv; vv not captured)`, `t (w gone)`): captured by the columns both have.
        var changed: [String] = []
        /// Each of `changed` as it is said once (a column renamed counts as gone: once its
        /// triggers are made again by the model, a later check no longer sees the rename).
        var changedKeys: [String: String] = [:]
        /// Tables captured before that have a unique index neither their capture nor the model
        /// knew (another program made it): a row an `OR REPLACE` removed through it meanwhile
        /// was not logged. Probed from now on.
        var unprobed: [String] = []
        /// The tables and columns of an adopted database another program renamed, as the
        /// triggers showed them before they were made again.
        var renames = ForeignRenames()
    }

    /// Brings every table of `schema` under capture, keeping each known table's number,
    /// and removes the triggers of tables no longer in it.
    static func install(on db: Connection, schema: StoreSchema) throws -> Installed {
        let recorded = try recorded(on: db, schema: schema)
        let known = Dictionary(recorded.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        // Renamed since: their triggers name them as they are now (SQLite renamed them there).
        let renames = schema.isAdopted ? try ForeignRenames.read(recorded, on: db) : ForeignRenames()
        var next = (known.values.map(\.id).max() ?? 0) + 1
        var tables: [CapturedTable] = [], drifted: [String] = [], missing: [String] = [], hidden: [String] = [], changed: [String] = [], unprobed: [String] = []
        var changedKeys: [String: String] = [:]
        let existing = schema.isAdopted ? try tableNames(on: db) : []
        for var table in CapturedTable.all(in: schema) {
            if schema.isAdopted {
                let renamed = renames.columns[table.name] ?? [:]
                // A renamed key: its triggers, as SQLite renamed them, capture it still (the fold
                // reads it by its name now), but new ones made from the model would name it as it was.
                if let before = known[table.name], let key = renamed[table.keyColumns[0]] {
                    changed.append("\(table.name) (key \(table.keyColumns[0]) renamed \(key))")
                    tables.append(before)
                    continue
                }
                let actual = existing.contains(table.name) ? try columns(of: table.name, on: db) : []
                if rowidHidden(in: table, columns: actual) {
                    missing.append(table.name)
                    hidden.append(table.name)
                    continue
                }
                guard existing.contains(table.name), let (present, change) = presentColumns(of: table, actual: actual, renamed: renamed) else {
                    missing.append(table.name)
                    continue
                }
                table = present
                if let change {
                    changed.append(change.text)
                    changedKeys[change.text] = change.key
                }
            }
            let id = known[table.name]?.id ?? { defer { next += 1 }; return next }()
            // The unique indexes as SQLite enforces them (collations, expressions), for the replace probe.
            let unique = table.kind == .entity ? try UniqueIndexes.terms(of: table.name, columns: table.keyColumns + table.columns, on: db) : []
            // An index known before with terms added at its end is not new: a partial index,
            // probed by its columns until its condition became a term (and an index unique on
            // its first terms could remove no row that those did not).
            let newIndexes = Set(unique).subtracting(before: known[table.name]?.uniqueConstraints ?? [], model: table.uniqueConstraints)
            if known[table.name] != nil, !newIndexes.isEmpty { unprobed.append(table.name) }
            table = CapturedTable(id: id, name: table.name, kind: table.kind, keyColumns: table.keyColumns, columns: table.columns, uniqueConstraints: unique, keyMap: table.keyMap)
            let existing = try triggerSQL(of: id, on: db)
            let triggers = CaptureTriggers(table: table)
            let wanted = triggers.statements
            // Keys inserted while the triggers were missing are numbered when they come back.
            try table.keyMap?.prepare(on: db, fill: existing != Set(wanted))
            if existing != Set(wanted) {
                if let before = known[table.name], before.columns == table.columns, before.uniqueConstraints == table.uniqueConstraints,
                   !triggers.previousVersions.contains(existing) { drifted.append(table.name) }
                try dropTriggers(of: id, on: db)
                // In main, whatever a TEMP view of the table's name hides (``KeyMap``); SQLite
                // stores the statement without the `main.`, as it is compared above.
                for sql in wanted { try db.execute("CREATE TRIGGER main." + sql.dropFirst("CREATE TRIGGER ".count)) }
            }
            try db.execute("INSERT OR REPLACE INTO \(CaptureLog.tables) (id, name, kind, columns, uniques) VALUES (?, ?, ?, ?, ?)", [
                .integer(Int64(id)), .string(table.name), .string(table.kind == .join ? "join" : "entity"),
                .string(encode(table.columns)), .string(encode(table.uniqueConstraints)),
            ])
            tables.append(table)
        }
        for gone in known.values where !tables.contains(where: { $0.name == gone.name }) { try dropTriggers(of: gone.id, on: db) }
        return Installed(tables: tables, drifted: drifted, missing: missing, hidden: hidden, changed: changed, changedKeys: changedKeys, unprobed: unprobed, renames: renames)
    }

    /// Whether another program gave `table`, which has no declared key, a column named as
    /// the rowid alias its key is read by (`rowid`): the column hides the rowid, and the
    /// triggers would log its values as keys. Such a table leaves capture until adopted
    /// again, which reads the rowid by another alias.
    private static func rowidHidden(in table: CapturedTable, columns: [String]) -> Bool {
        let key = table.keyColumns[0]
        guard table.kind == .entity, RowidName.contains(key) else { return false }
        return columns.contains { $0.lowercased() == key.lowercased() }
    }

    /// The columns of table `name` as they are now (generated ones among them, hidden ones not).
    private static func columns(of name: String, on db: Connection) throws -> [String] {
        let statement = try db.makeStatement("SELECT name FROM pragma_table_xinfo(?, 'main') WHERE hidden = 0")
        try statement.bind([.string(name)])
        var columns: [String] = []
        while try statement.step() { columns.append(statement.string(at: 0)) }
        return columns
    }

    /// An adopted table's capture narrowed to the columns it has now (another program may
    /// have renamed, added or dropped some: triggers naming a column that is gone would make
    /// that program's writes fail), with what changed; nil when its key column is gone. The
    /// columns are in the table's order, not the model's (attributes, then to-one keys), so
    /// adopting a foreign key again as a relationship leaves them, and the log rows logged
    /// under them, as they were.
    private static func presentColumns(of table: CapturedTable, actual: [String], renamed: [String: String]) -> (CapturedTable, (text: String, key: String)?)? {
        let key = table.keyColumns[0]
        guard actual.contains(key) || RowidName.contains(key) else { return nil }
        let moved = table.columns.compactMap { column in renamed[column].map { "\(column) renamed \($0)" } }
        let gone = table.columns.filter { !actual.contains($0) && renamed[$0] == nil }
        let new = actual.filter { $0 != key && !table.columns.contains($0) }
        let ordered = actual.filter(table.columns.contains)
        guard !gone.isEmpty || !new.isEmpty || !moved.isEmpty else {
            return (CapturedTable(id: table.id, name: table.name, kind: table.kind, keyColumns: table.keyColumns, columns: ordered, uniqueConstraints: table.uniqueConstraints, keyMap: table.keyMap), nil)
        }
        let present = CapturedTable(id: table.id, name: table.name, kind: table.kind, keyColumns: table.keyColumns,
                                    columns: ordered,
                                    uniqueConstraints: table.uniqueConstraints.filter { $0.allSatisfy(actual.contains) }, keyMap: table.keyMap)
        let notCaptured = new.isEmpty ? [] : ["\(new.joined(separator: ", ")) not captured"]
        let text = "\(table.name) (\((moved + (gone.isEmpty ? [] : ["\(gone.joined(separator: ", ")) gone"]) + notCaptured).joined(separator: "; ")))"
        let missing = table.columns.filter { !actual.contains($0) }
        let remembered = missing.isEmpty ? text : "\(table.name) (\((["\(missing.joined(separator: ", ")) gone"] + notCaptured).joined(separator: "; ")))"
        return (present, (text, remembered))
    }

    /// The names of the database's ordinary tables (not views, virtual or shadow tables),
    /// Tributary's and SQLite's left out.
    static func tableNames(on db: Connection) throws -> Set<String> {
        let statement = try db.makeStatement("""
            SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table'
            AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE '\\_tributary\\_%' ESCAPE '\\'
            """)
        var names = Set<String>()
        while try statement.step() { names.insert(statement.string(at: 0)) }
        return names
    }

    /// The name `table` has in the database now: its insert trigger's table (SQLite moves a
    /// trigger with the table another program renames), else its own name while a table has
    /// it; nil when it is gone.
    static func currentName(of table: CapturedTable, on db: Connection) throws -> String? {
        let trigger = "\(CaptureLog.triggerPrefix)\(table.id)_i"
        if let name = try db.scalar("SELECT tbl_name FROM sqlite_master WHERE type = 'trigger' AND name = ?", [.string(trigger)])?.stringValue {
            return name
        }
        return try db.hasTable(table.name) ? table.name : nil
    }

    /// The names `table`'s captured columns have now, by the names they were captured under,
    /// for those another program renamed (`ALTER TABLE … RENAME COLUMN`): SQLite renames a
    /// column in every trigger that names it, so each column's update trigger, `… AFTER UPDATE
    /// OF "name" ON …`, names it as it is now, and the key's trigger the key (of a rowid
    /// table). Columns whose trigger is gone keep their names.
    /// The IDs of `tables` whose capture triggers are not all there (each table's insert and
    /// delete triggers, and an entity's column triggers): another program dropped them, or
    /// the table with them, since they were installed.
    static func unwatched(_ tables: [CapturedTable], on db: Connection) throws -> Set<Int> {
        let statement = try db.makeStatement("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name GLOB ?")
        var ids: Set<Int> = []
        for table in tables {
            let prefix = "\(CaptureLog.triggerPrefix)\(table.id)_"
            try statement.bind([.string(prefix + "*")])
            var present: Set<String> = []
            while try statement.step() { present.insert(String(statement.string(at: 0).dropFirst(prefix.count))) }
            statement.reset()
            let needed = ["i", "d"] + (table.kind == .entity ? table.columns.indices.map { "u\($0)" } : [])
            if !needed.allSatisfy(present.contains) { ids.insert(table.id) }
        }
        return ids
    }

    static func renamedColumns(of table: CapturedTable, on db: Connection) throws -> [String: String] {
        guard table.kind == .entity else { return [:] }
        let prefix = "\(CaptureLog.triggerPrefix)\(table.id)_"
        let statement = try db.makeStatement("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name GLOB ?")
        try statement.bind([.string(prefix + "*")])
        var renamed: [String: String] = [:]
        while try statement.step() {
            let suffix = statement.string(at: 0).dropFirst(prefix.count)
            let captured: String
            if suffix == "k", table.keyMap == nil {
                captured = table.keyColumns[0]
            } else if suffix.first == "u", let j = Int(suffix.dropFirst()), table.columns.indices.contains(j) {
                captured = table.columns[j]
            } else {
                continue
            }
            if let now = updatedColumn(in: statement.string(at: 1)), now != captured { renamed[captured] = now }
        }
        return renamed
    }

    /// The column a trigger's `UPDATE OF` names first, unquoted.
    static func updatedColumn(in sql: String) -> String? {
        guard let range = sql.range(of: " UPDATE OF ") else { return nil }
        let rest = sql[range.upperBound...]
        guard rest.first == "\"" else {
            let bare = rest.prefix { $0 != " " && $0 != "," }
            return bare.isEmpty ? nil : String(bare)
        }
        var name = "", quoted = rest.dropFirst()
        while let c = quoted.first {
            quoted = quoted.dropFirst()
            if c == "\"" {
                guard quoted.first == "\"" else { return name }
                quoted = quoted.dropFirst()
            }
            name.append(c)
        }
        return nil
    }

    /// The name a table was captured under, from the table list.
    static func recordedName(of id: Int, on db: Connection) throws -> String? {
        try db.scalar("SELECT name FROM \(CaptureLog.tables) WHERE id = ?", [.integer(Int64(id))])?.stringValue
    }

    /// Removes every capture trigger (the table list and log stay, for history's sake).
    static func uninstall(on db: Connection) throws {
        for table in try recorded(on: db) { try dropTriggers(of: table.id, on: db) }
    }

    private static func triggerSQL(of id: Int, on db: Connection) throws -> Set<String> {
        let statement = try db.makeStatement("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name GLOB ?")
        try statement.bind([.string("\(CaptureLog.triggerPrefix)\(id)_*")])
        var sql = Set<String>()
        while try statement.step() { sql.insert(statement.string(at: 0)) }
        return sql
    }

    private static func dropTriggers(of id: Int, on db: Connection) throws {
        let statement = try db.makeStatement("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name GLOB ?")
        try statement.bind([.string("\(CaptureLog.triggerPrefix)\(id)_*")])
        var names: [String] = []
        while try statement.step() { names.append(statement.string(at: 0)) }
        for name in names { try db.execute("DROP TRIGGER \(quote(name))") }
    }

    private static func encode<T: Encodable>(_ value: T) -> String {
        (try? JSONEncoder().encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
    }

    private static func decode<T: Decodable>(_ text: String) -> T? {
        try? JSONDecoder().decode(T.self, from: Data(text.utf8))
    }
}

private extension Set where Element == [String] {
    /// The indexes (term lists) neither `before` nor `model` has, nor `before` as their first terms.
    func subtracting(before: [[String]], model: [[String]]) -> Set<[String]> {
        subtracting(before).subtracting(model).filter { index in !before.contains { !$0.isEmpty && index.starts(with: $0) } }
    }
}
