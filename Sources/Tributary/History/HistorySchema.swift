/// The history tables and their format version, kept in the store.
///
/// - `_tributary_history`: one row per transaction: token, timestamp, source,
///   change count, the entities touched, and the changes as one payload
///   (zstd-compressed when it pays). Tokens are assigned as one more than the
///   newest kept or pruned token, so they are never reused after pruning;
/// - `_tributary_history_source`: each distinct (author, context name, process)
///   once. Author and context filters find their sources by index and check each
///   transaction of the token range against them: a commit writes one history page
///   (an index on (sourceID, token), kept before, cost a second page per commit: 15% more
///   time for single-row transactions, for filters that read a token range anyway);
/// - `_tributary_consumer`: named cursors.
enum HistorySchema {
    /// The history format this version writes; a newer one is refused. Format 2 adds the
    /// capture of other programs' writes (``ForeignCapture``): a Tributary that knows only
    /// format 1 would run the capture triggers on its own writes and record them twice.
    static let formatVersion = 2
    static let transactions = "_tributary_history"
    static let sources = "_tributary_history_source"
    static let consumers = "_tributary_consumer"

    /// The newest token: the newest kept transaction, or what pruning removed if none is kept.
    static let newestTokenSQL = "SELECT max(coalesce((SELECT max(token) FROM _tributary_history), 0), coalesce((SELECT CAST(value AS INTEGER) FROM _tributary_metadata WHERE key = 'historyPrunedThrough'), 0))"

    /// Whether the store has history (for read-only opens); checks the format.
    static func isPresent(on db: Connection, place: String) throws -> Bool {
        let stored = try db.scalar("SELECT value FROM _tributary_metadata WHERE key = 'historyFormat'")?.stringValue.flatMap { Int($0) }
        if let stored, stored > formatVersion {
            throw TributaryError(.newerFormat, "the store's history was written in format \(stored), newer than this Tributary's \(formatVersion)", location: place, hint: "upgrade Tributary to read it")
        }
        return stored != nil
    }

    /// Creates the tables if needed and checks the format; returns whether history is on.
    static func prepare(on db: Connection, enable: Bool, place: String) throws -> Bool {
        let stored = try db.scalar("SELECT value FROM _tributary_metadata WHERE key = 'historyFormat'")?.stringValue.flatMap { Int($0) }
        if let stored, stored > formatVersion {
            throw TributaryError(.newerFormat, "the store's history was written in format \(stored), newer than this Tributary's \(formatVersion)", location: place, hint: "upgrade Tributary to read it")
        }
        guard stored != nil || enable else { return false }
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
                    payload BLOB NOT NULL);
                CREATE TABLE IF NOT EXISTS \(consumers) (
                    name TEXT PRIMARY KEY,
                    token INTEGER NOT NULL,
                    committedAt REAL NOT NULL,
                    createdAt REAL NOT NULL) WITHOUT ROWID;
                INSERT INTO _tributary_metadata (key, value) VALUES ('historyFormat', '\(formatVersion)'), ('historyPrunedThrough', '0')
                    ON CONFLICT(key) DO NOTHING;
                """)
        }
        return true
    }
}
