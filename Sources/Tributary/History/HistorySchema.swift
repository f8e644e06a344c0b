/// The history tables and their format version, kept in the store.
///
/// - `_tributary_history`: one row per transaction: token, timestamp, source,
///   change count, the entities touched, and the changes as one payload
///   (zstd-compressed when it pays), an optional reason and the chain hash
///   (``HistoryChain``). Tokens are assigned as one more than the
///   newest kept or pruned token, so they are never reused after pruning;
/// - `_tributary_history_source`: each distinct (author, context name, process)
///   once. Author and context filters find their sources by index and check each
///   transaction of the token range against them: a commit writes one history page
///   (an index on (sourceID, token), kept before, cost a second page per commit: 15% more
///   time for single-row transactions, for filters that read a token range anyway);
/// - `_tributary_consumer`: named cursors;
/// - `_tributary_history_prune`: one row per prune: when, through which token, how much
///   went, and the chain's anchor after it;
/// - `_tributary_history_object`: the object timeline index (``ObjectTimelineIndex``).
enum HistorySchema {
    /// The history format this version writes; a newer one is refused. Format 2 adds the
    /// capture of other programs' writes (``ForeignCapture``): a Tributary that knows only
    /// format 1 would run the capture triggers on its own writes and record them twice.
    /// Format 3 adds each transaction's reason and the hash that chains it to the one
    /// before (``HistoryChain``): an older Tributary would write transactions without it.
    /// Format 4 adds the object timeline index (``ObjectTimelineIndex``), which an older
    /// Tributary would not keep. Format 5 adds schema history (``SchemaHistory``): an older
    /// Tributary would migrate the model without recording it. Format 6 links the delete and
    /// the insert of a key another program changed (``HistoryPayload/movedFlag``): an older
    /// Tributary would read such a change as damaged. It adds no table: an older store is
    /// upgraded by its number alone. Format 7 stores the declared key of an adopted table's
    /// changes (``HistoryPayload/keyFlag``), which an older Tributary would read as damaged;
    /// upgraded by its number alone too. Format 8's capture triggers compare a column's old
    /// and new values as stored, not by its collation (``CaptureTriggers``), and Tributary
    /// writes `WITHOUT ROWID` tables through them: an older Tributary would take the triggers
    /// for ones another program altered; upgraded by its number (and the triggers) alone.
    /// Format 9's column triggers compare storage classes too (1 replaced by 1.0 in an
    /// untyped column counts), and join tables have a probe for an `UPDATE OR REPLACE`:
    /// the same again.
    static let formatVersion = 9
    static let transactions = "_tributary_history"
    static let sources = "_tributary_history_source"
    static let consumers = "_tributary_consumer"
    static let prunes = "_tributary_history_prune"

    /// The newest token: the newest kept transaction, or what pruning removed if none is kept.
    static let newestTokenSQL = "SELECT max(coalesce((SELECT max(token) FROM _tributary_history), 0), coalesce((SELECT CAST(value AS INTEGER) FROM _tributary_metadata WHERE key = 'historyPrunedThrough'), 0))"

    /// What a store's history has: its format, and whether it keeps the object timeline index.
    struct Layout: Equatable {
        var format: Int
        var hasObjectIndex: Bool

        /// The layout of the store at `db`, its format read and checked; nil without history.
        static func read(on db: Connection, place: String) throws -> Layout? {
            guard let format = try storedFormat(on: db, place: place) else { return nil }
            return Layout(format: format, hasObjectIndex: try ObjectTimelineIndex.exists(on: db))
        }
    }

    /// The store's history format (for read-only opens), nil without history; checks it.
    static func storedFormat(on db: Connection, place: String) throws -> Int? {
        let stored = try db.scalar("SELECT value FROM _tributary_metadata WHERE key = 'historyFormat'")?.stringValue.flatMap { Int($0) }
        if let stored, stored > formatVersion {
            throw TributaryError(.newerFormat, "the store's history was written in format \(stored), newer than this Tributary's \(formatVersion)", location: place, hint: "upgrade Tributary to read it")
        }
        return stored
    }

    /// Creates the tables if needed (chained unless `chain` is false, with the object
    /// timeline index unless `objectIndex` is false), upgrades an older format and checks
    /// the format; returns the history's layout, nil when history is off.
    @discardableResult
    static func prepare(on db: Connection, enable: Bool, chain: Bool = true, objectIndex: Bool = true, place: String) throws -> Layout? {
        let stored = try storedFormat(on: db, place: place)
        guard stored != nil || enable else { return nil }
        // Stores made before the index per source was dropped.
        try db.execute("DROP INDEX IF EXISTS \(transactions)_by_source")
        if stored == nil {
            try db.execute("""
                CREATE TABLE IF NOT EXISTS \(sources) (
                    id INTEGER PRIMARY KEY,
                    author TEXT,
                    contextName TEXT,
                    processID INTEGER NOT NULL,
                    processName TEXT NOT NULL);
                CREATE INDEX IF NOT EXISTS \(sources)_author ON \(sources) (author);
                CREATE INDEX IF NOT EXISTS \(sources)_context ON \(sources) (contextName);
                CREATE TABLE IF NOT EXISTS \(transactions) (
                    token INTEGER PRIMARY KEY,
                    timestamp REAL NOT NULL,
                    sourceID INTEGER NOT NULL,
                    changeCount INTEGER NOT NULL,
                    entities TEXT NOT NULL,
                    hash BLOB,
                    reason TEXT,
                    payload BLOB NOT NULL);
                CREATE TABLE IF NOT EXISTS \(consumers) (
                    name TEXT PRIMARY KEY,
                    token INTEGER NOT NULL,
                    committedAt REAL NOT NULL,
                    createdAt REAL NOT NULL) WITHOUT ROWID;
                \(pruneTableSQL);
                INSERT INTO _tributary_metadata (key, value) VALUES ('historyFormat', '\(formatVersion)'), ('historyPrunedThrough', '0')
                    ON CONFLICT(key) DO NOTHING;
                """)
            if chain { try HistoryChain.setAnchor(HistoryChain.genesis, on: db) }
            if objectIndex { try ObjectTimelineIndex.build(on: db) }
            try SchemaHistory.create(on: db)
        } else if let stored, stored < formatVersion {
            try upgrade(from: stored, on: db, chain: chain, objectIndex: objectIndex)
        }
        return try Layout.read(on: db, place: place)
    }

    private static let pruneTableSQL = """
        CREATE TABLE IF NOT EXISTS \(prunes) (
            id INTEGER PRIMARY KEY,
            prunedAt REAL NOT NULL,
            through INTEGER NOT NULL,
            transactions INTEGER NOT NULL,
            changes INTEGER NOT NULL,
            anchor BLOB)
        """

    /// The current format from an older one, in the opening transaction: from before 3, the
    /// reason and hash columns (after the payload there, so reading the newest hash at each
    /// commit reads its overflow pages: new stores put them before it) and, unless `chain`
    /// is false, every kept transaction hashed into the chain; from before 4, unless
    /// `objectIndex` is false, the object timeline index built from the kept history; from
    /// before 5, the schema history table (its baseline is written by the caller, which knows the model);
    /// to 6, 7 and 8, nothing but the number (older payloads decode as they did; the capture
    /// installs its triggers again).
    private static func upgrade(from stored: Int, on db: Connection, chain: Bool, objectIndex: Bool) throws {
        if stored < 3 { try addChain(on: db, chain: chain) }
        if stored < 4 && objectIndex { try ObjectTimelineIndex.build(on: db) }
        try SchemaHistory.create(on: db)
        try db.execute("UPDATE _tributary_metadata SET value = '\(formatVersion)' WHERE key = 'historyFormat'")
    }

    private static func addChain(on db: Connection, chain: Bool) throws {
        let columns = try db.makeStatement("SELECT name FROM pragma_table_info('\(transactions)')")
        var names: Set<String> = []
        while try columns.step() { names.insert(columns.string(at: 0)) }
        if !names.contains("reason") { try db.execute("ALTER TABLE \(transactions) ADD COLUMN reason TEXT") }
        if !names.contains("hash") { try db.execute("ALTER TABLE \(transactions) ADD COLUMN hash BLOB") }
        try db.execute(pruneTableSQL)
        if chain { try HistoryChain.chainExisting(on: db) }
    }
}
