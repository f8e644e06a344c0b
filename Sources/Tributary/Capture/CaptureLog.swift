/// The table the capture triggers write: one row per row event of another program,
/// numbered in commit order by its rowid (`seq`), with untyped columns so that any
/// value of any table fits.
///
/// `t` packs the table, the column and the operation (``code(table:column:op:)``);
/// `k0`, `k1` hold the row's key; `c0…` the values the event needs that the row no
/// longer holds: an update's old value of its one column, a deleted row's columns.
/// The values after an insert or update are read from the rows themselves when the
/// log is folded into history (``ForeignFold``), which keeps the triggers short.
enum CaptureLog {
    static let table = "_tributary_capture_log"
    static let tables = "_tributary_capture_table"
    static let state = "_tributary_capture_state"
    /// Every capture trigger's name starts with this.
    static let triggerPrefix = "_tributary_capture_"

    /// Whether the log holds rows other programs committed that no fold has read yet (two
    /// seeks); the log must exist.
    static func hasUnfoldedRows(on db: Connection) throws -> Bool {
        let newest = try db.scalar("SELECT max(seq) FROM \(table)")?.integerValue ?? 0
        return newest > (try CaptureState.read(on: db)).foldedSeq
    }

    /// ``hasUnfoldedRows(on:)``, or nil when the database has no log (a store without
    /// capture, or one another program dropped).
    static func hasUnfoldedRowsIfLogged(on db: Connection) throws -> Bool? {
        guard try db.hasTable(table), try db.hasTable(state) else { return nil }
        return try hasUnfoldedRows(on: db)
    }

    /// What a log row records.
    enum Op: Int, Sendable {
        /// The row that keeps `max(seq)` from going down once the rows before it are folded.
        case sentinel = 0
        case insert = 1
        /// One column changed: `c0` is its old value.
        case update = 2
        /// `c0…` are the deleted row's columns.
        case delete = 3
        /// A row an insert or a key change found in its way (it may have been replaced): `k`, `c0…` are that row.
        case replaced = 4
        /// The key changed: `k0` is the new key, `c0` the old one.
        case keyChange = 5
    }

    static func code(table: Int, column: Int = 0, op: Op) -> Int64 {
        Int64(table) * 65_536 + Int64(column) * 8 + Int64(op.rawValue)
    }

    static func decode(_ code: Int64) -> (table: Int, column: Int, op: Op?) {
        (Int(code / 65_536), Int((code % 65_536) / 8), Op(rawValue: Int(code % 8)))
    }

    /// Creates the log (with a value column for each column of `schema`'s widest table), its
    /// table list and its state row. Returns true when the log was missing while its state was
    /// not (another program dropped it): it is made again numbered on from the position
    /// folded, so that its new rows are read, and what it held unread is lost.
    @discardableResult
    static func create(on db: Connection, schema: StoreSchema) throws -> Bool {
        let valueColumns = max(schema.tables.values.map(\.dataColumns.count).max() ?? 1, 1)
        let hadState = try db.hasTable(state)
        let hadLog = try db.hasTable(table)
        let values = (0..<valueColumns).map { ", c\($0)" }.joined()
        try db.execute("""
            CREATE TABLE IF NOT EXISTS \(state) (id INTEGER PRIMARY KEY CHECK (id = 1), walSalt1 INTEGER, walSalt2 INTEGER,
                walFrame INTEGER NOT NULL DEFAULT 0, foldedSeq INTEGER NOT NULL DEFAULT 0, checkedToken INTEGER NOT NULL DEFAULT 0);
            INSERT OR IGNORE INTO \(state) (id) VALUES (1);
            CREATE TABLE IF NOT EXISTS \(table) (seq INTEGER PRIMARY KEY, t INTEGER NOT NULL, k0, k1\(values));
            INSERT INTO \(table) (seq, t) SELECT (SELECT foldedSeq FROM \(state) WHERE id = 1), 0 WHERE NOT EXISTS (SELECT 1 FROM \(table));
            CREATE TABLE IF NOT EXISTS \(tables) (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, kind TEXT NOT NULL,
                columns TEXT NOT NULL, uniques TEXT NOT NULL);
            """)
        if try db.scalar("SELECT count(*) FROM pragma_table_info('\(state)') WHERE name = 'checkedToken'")?.integerValue == 0 {
            try db.execute("ALTER TABLE \(state) ADD COLUMN checkedToken INTEGER NOT NULL DEFAULT 0")
        }
        let existing = try db.scalar("SELECT count(*) FROM pragma_table_info('\(table)') WHERE name GLOB 'c[0-9]*'")?.integerValue ?? 0
        // The log keeps the columns it has when fewer are needed (a table lost columns).
        for column in min(Int(existing), valueColumns)..<valueColumns {
            try db.execute("ALTER TABLE \(table) ADD COLUMN c\(column)")
        }
        return hadState && !hadLog
    }
}
