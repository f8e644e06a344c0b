import Foundation

extension HistoryRecorder {
    /// The process's ID and executable name, recorded with each transaction.
    static let processID = Int32(getpid())
    static let processName = ProcessInfo.processInfo.processName

    /// The ID of the (author, context, process) row, created on first use and cached.
    private func sourceID(for source: HistorySource, on db: Connection) throws -> Int64 {
        let key = SourceKey(author: source.author, contextName: source.contextName)
        if let id = sourceIDs[key] { return id }
        let id = try Self.sourceID(source, on: db)
        sourceIDs[key] = id
        return id
    }

    /// The ID of a source row, created when there is none.
    static func sourceID(_ source: HistorySource, on db: Connection) throws -> Int64 {
        let author: AttributeValue = source.author.map { .string($0) } ?? .null
        let context: AttributeValue = source.contextName.map { .string($0) } ?? .null
        let process: [AttributeValue] = [.integer(Int64(source.processID)), .string(source.processName ?? "")]
        if let existing = try db.scalar("SELECT id FROM \(HistorySchema.sources) WHERE author IS ? AND contextName IS ? AND processID = ? AND processName = ?", [author, context] + process)?.integerValue {
            return existing
        }
        try db.execute("INSERT INTO \(HistorySchema.sources) (author, contextName, processID, processName) VALUES (?, ?, ?, ?)", [author, context] + process)
        return db.lastInsertRowID
    }

    /// Writes the collected changes as one history transaction on `db`, inside the
    /// caller's SQL transaction. Returns the new token's value, or nil when nothing changed.
    func commit(on db: Connection, metadata: TransactionMetadata) throws -> Int64? {
        guard let (payload, count, entities, objects) = try takePayload() else { return nil }
        let source = HistorySource.current(metadata)
        let row = HistoryRow(payload: payload, count: count, entities: entities, source: source, reason: metadata.reason, objects: objects)
        return try Self.insertTransaction(row, sourceID: try sourceID(for: source, on: db), on: db)
    }

    /// A history transaction to insert.
    struct HistoryRow {
        var payload: [UInt8]
        var count: Int
        var entities: [String]
        var source: HistorySource
        var reason: String?
        /// The objects touched, for the object timeline index; nil when the store has none.
        var objects: ObjectTimelineIndex.Entries?
        var timestamp = Date()
    }

    /// Inserts one history transaction with the next token and, when the history is
    /// chained, its hash (``HistoryChain``), and its objects' rows of the timeline index
    /// (``ObjectTimelineIndex``); returns the token. `sourceID` is `row.source`'s.
    static func insertTransaction(_ row: HistoryRow, sourceID: Int64, on db: Connection) throws -> Int64 {
        let (previousToken, previousHash) = try HistoryChain.head(on: db)
        let token = previousToken + 1
        let entities = "," + row.entities.joined(separator: ",") + ","
        let timestamp = row.timestamp.timeIntervalSince1970
        let hash = previousHash.map { previous in
            row.payload.withUnsafeBytes { payload in
                HistoryChain.hash(previous: previous, HistoryChain.Entry(token: token, timestamp: timestamp, source: row.source, reason: row.reason,
                                                                        changeCount: Int64(row.count), entities: entities, payload: payload))
            }
        }
        let statement = try db.cachedStatement("""
            INSERT INTO \(HistorySchema.transactions) (token, timestamp, sourceID, changeCount, entities, payload, reason, hash)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """)
        try statement.bind([
            .integer(token), .double(timestamp), .integer(sourceID), .integer(Int64(row.count)), .string(entities), .data(Data(row.payload)),
            row.reason.map { .string($0) } ?? .null, hash.map { .data(Data($0)) } ?? .null,
        ])
        try statement.run()
        if let objects = row.objects { try ObjectTimelineIndex.record(objects, changeCount: row.count, token: token, on: db) }
        return token
    }
}
