/// The index from objects to the history transactions that touched them, so that an
/// object's timeline (``HistoryFilter/objectIDs``) reads its own transactions instead of
/// every transaction of its entity.
///
/// `_tributary_history_object` holds one row per transaction and *block* of 64 primary keys
/// of an entity it touched, with a bitmap of the keys touched (bit `key & 63`): a batch of
/// 1,000 consecutive inserts adds about 16 rows. A lookup reads the rows of the object's
/// block, keeps those whose bit is set, and so finds exactly the object's transactions.
///
/// The rows are written in the SQLite transaction of a history transaction
/// (``HistoryRecorder/insertTransaction(_:sourceID:on:)``): a large one (``largeTransaction``
/// changes or more) writes its own at once; small ones are left to the next transaction whose
/// token is a multiple of ``flushInterval`` or that is large, which writes the rows of every
/// transaction since the last such one, decoded from their payloads. A single-row commit
/// would otherwise write a page more (the index's) each time, and a transaction of scattered
/// updates as many pages as changes; this way 64 transactions share their pages. `historyObjectIndexThrough` in the metadata is the token through which
/// every transaction's rows are written, and a lookup also reads the (at most 63 small)
/// transactions after it. Pruning deletes rows with their transactions.
///
/// A store has the index when its history was created or upgraded with
/// ``PersistentStoreDescription/historyObjectIndex`` on (the default): the table's presence
/// says so, and every writer of the format keeps it.
enum ObjectTimelineIndex {
    static let table = "_tributary_history_object"
    /// The metadata key of the token through which every transaction's rows are written.
    static let throughKey = "historyObjectIndexThrough"
    /// Every transaction whose token is a multiple of this writes the rows left to it.
    static let flushInterval: Int64 = 64
    /// A transaction with this many changes or more writes its rows (and those left) at once,
    /// so that the transactions a lookup decodes besides the index are small.
    static let largeTransaction = 256

    static let createSQL = """
        CREATE TABLE IF NOT EXISTS \(table) (
            entity TEXT NOT NULL,
            block INTEGER NOT NULL,
            token INTEGER NOT NULL,
            keys INTEGER NOT NULL,
            PRIMARY KEY (entity, block, token)) WITHOUT ROWID
        """

    /// The block holding `key`, and the key's bit in the block's bitmap.
    @inline(__always)
    static func place(of key: Int64) -> (block: Int64, bit: Int64) {
        (key >> 6, Int64(bitPattern: 1 << UInt64(key & 63)))
    }

    /// Whether the store at `db` has the index.
    static func exists(on db: Connection) throws -> Bool {
        try db.scalar("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?", [.string(table)]) != nil
    }

    /// The objects of one transaction, merged into blocks as they are added.
    struct Entries {
        struct Row {
            /// The entity's index in ``names``.
            var entity: Int
            var block: Int64
            var keys: Int64
        }
        private(set) var rows: [Row] = []
        /// The entity names rows refer to.
        var names: [String] = []
        private var nameIndex: [String: Int] = [:]
        private var rowByBlock: [BlockKey: Int] = [:]

        private struct BlockKey: Hashable {
            let entity: Int
            let block: Int64
        }

        var isEmpty: Bool { rows.isEmpty }

        /// Adds object `key` of the entity named `entityName`.
        mutating func add(entityName: String, key: Int64) {
            let entity: Int
            if let known = nameIndex[entityName] {
                entity = known
            } else {
                entity = names.count
                nameIndex[entityName] = entity
                names.append(entityName)
            }
            add(entity: entity, key: key)
        }

        /// Adds object `key` of entity `entity`, an index into ``names`` (which the caller sets).
        mutating func add(entity: Int, key: Int64) {
            let (block, bit) = ObjectTimelineIndex.place(of: key)
            // Keys usually come in runs (a batch insert): merge into the last row without hashing.
            if let last = rows.last, last.entity == entity, last.block == block {
                rows[rows.count - 1].keys |= bit
                return
            }
            let blockKey = BlockKey(entity: entity, block: block)
            if let index = rowByBlock[blockKey] {
                rows[index].keys |= bit
            } else {
                rowByBlock[blockKey] = rows.count
                rows.append(Row(entity: entity, block: block, keys: bit))
            }
        }
    }

    /// Keeps the index for transaction `token`, just inserted with `changeCount` changes on
    /// `objects`: writes its rows and those of the transactions left since the last flush
    /// when it is large or its token a multiple of ``flushInterval``, else leaves them.
    static func record(_ objects: Entries, changeCount: Int, token: Int64, on db: Connection) throws {
        guard changeCount >= largeTransaction || token % flushInterval == 0 else { return }
        let through = try db.scalar("SELECT CAST(value AS INTEGER) FROM _tributary_metadata WHERE key = ?", [.string(throughKey)])?.integerValue ?? 0
        if through < token - 1 {
            try forEachTransaction("WHERE token > ? AND token < ?", [.integer(through), .integer(token)], on: db) { left, entries in
                try insert(entries, token: left, on: db)
            }
        }
        try insert(objects, token: token, on: db)
        try setThrough(token, on: db)
    }

    private static func setThrough(_ token: Int64, on db: Connection) throws {
        try db.execute("INSERT INTO _tributary_metadata (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                       [.string(throughKey), .string(String(token))])
    }

    /// Writes the rows of transaction `token`, replacing any it has: a flushed point that
    /// another program moved back makes a flush write rows again, and must not fail the commit.
    static func insert(_ entries: Entries, token: Int64, on db: Connection) throws {
        guard !entries.isEmpty else { return }
        let statement = try db.cachedStatement("""
            INSERT INTO \(table) (entity, block, token, keys) VALUES (?, ?, ?, ?)
            ON CONFLICT (entity, block, token) DO UPDATE SET keys = excluded.keys
            """)
        for row in entries.rows {
            try statement.bind([.string(entries.names[row.entity]), .integer(row.block), .integer(token), .integer(row.keys)])
            try statement.run()
            statement.reset()
        }
    }

    /// Deletes the rows of the transactions through `token`, about to be pruned: found from
    /// their payloads, so that the table needs no second index on the token (a page more
    /// written by every commit).
    static func prune(through token: Int64, on db: Connection) throws {
        let delete = try db.cachedStatement("DELETE FROM \(table) WHERE entity = ? AND block = ? AND token = ?")
        try forEachTransaction("WHERE token <= ?", [.integer(token)], on: db) { token, entries in
            for row in entries.rows {
                try delete.bind([.string(entries.names[row.entity]), .integer(row.block), .integer(token)])
                try delete.run()
                delete.reset()
            }
        }
    }

    /// A condition on the history's `token` matching the transactions that touched any of
    /// `objects` and the few after the index's flushed point (the caller filters those by
    /// their changes), as one list, so that SQLite looks each up by token rather than scan a
    /// range. Its argument: the objects' blocks, each with the bitmap of the keys wanted, as
    /// one JSON array (any number of objects: an `OR` per object would exceed SQLite's
    /// expression depth at about 500).
    static func tokenCondition(for objects: [ObjectID]) -> (sql: String, arguments: [AttributeValue]) {
        var entries = Entries()
        for object in objects { entries.add(entityName: object.entityName, key: object.primaryKey) }
        var json = JSONWriter()
        json.array { list in
            for row in entries.rows {
                list.array { $0.value(.string(entries.names[row.entity])); $0.value(.integer(row.block)); $0.value(.integer(row.keys)) }
            }
        }
        let sql = """
            token IN (SELECT o.token FROM json_each(?) AS w JOIN \(table) AS o
                ON o.entity = json_extract(w.value, '$[0]') AND o.block = json_extract(w.value, '$[1]')
                WHERE o.keys & json_extract(w.value, '$[2]') != 0
              UNION ALL SELECT t.token FROM \(HistorySchema.transactions) AS t
                WHERE t.token > coalesce((SELECT CAST(value AS INTEGER) FROM _tributary_metadata WHERE key = '\(throughKey)'), 0))
            """
        return (sql, [.string(json.text)])
    }

    /// Creates the index, or empties it, and fills it from the kept history (an upgrade, in
    /// the opening transaction).
    static func build(on db: Connection) throws {
        try db.execute(createSQL)
        try db.execute("DELETE FROM \(table)")
        try forEachTransaction("", [], on: db) { token, entries in try insert(entries, token: token, on: db) }
        try setThrough(try db.scalar(HistorySchema.newestTokenSQL)?.integerValue ?? 0, on: db)
    }

    /// Calls `body` with the objects of each history transaction matching `condition`, in
    /// token order. A payload that does not decode is left out: reading that transaction
    /// reports it.
    private static func forEachTransaction(_ condition: String, _ arguments: [AttributeValue], on db: Connection,
                                           _ body: (Int64, Entries) throws -> Void) throws {
        let rows = try db.makeStatement("SELECT token, payload FROM \(HistorySchema.transactions) \(condition) ORDER BY token")
        try rows.bind(arguments)
        while try rows.step() {
            guard let entries = try? rows.withBytes(at: 1, entries) else { continue }
            try body(rows.int64(at: 0), entries)
        }
    }

    /// The objects a stored payload holds.
    private static func entries(_ stored: UnsafeRawBufferPointer) throws -> Entries {
        let (bytes, names, start) = try HistoryPayload.open(stored)
        var entries = Entries()
        guard !bytes.isEmpty else { return entries }
        var reader = start
        for _ in 0..<(try reader.count()) {
            let header = try HistoryPayload.changeHeader(&reader, names: names)
            try HistoryPayload.skipProperties(&reader, count: header.propertyCount)
            entries.add(entityName: header.entity, key: header.key)
        }
        return entries
    }
}
