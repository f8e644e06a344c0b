import Foundation

extension HistoryRecorder {
    /// The process's ID and executable name, recorded with each transaction.
    static let processID = Int32(getpid())
    static let processName = ProcessInfo.processInfo.processName

    /// The ID of the (author, context, process) row, created on first use and cached.
    private func sourceID(for metadata: TransactionMetadata, on db: Connection) throws -> Int64 {
        let key = SourceKey(author: metadata.author, contextName: metadata.contextName)
        if let id = sourceIDs[key] { return id }
        let id = try Self.sourceID(author: metadata.author, contextName: metadata.contextName, processID: Self.processID, processName: Self.processName, on: db)
        sourceIDs[key] = id
        return id
    }

    /// The ID of a source row, created when there is none.
    static func sourceID(author: String?, contextName: String?, processID: Int32, processName: String, on db: Connection) throws -> Int64 {
        let author: AttributeValue = author.map { .string($0) } ?? .null
        let context: AttributeValue = contextName.map { .string($0) } ?? .null
        let process: [AttributeValue] = [.integer(Int64(processID)), .string(processName)]
        if let existing = try db.scalar("SELECT id FROM \(HistorySchema.sources) WHERE author IS ? AND contextName IS ? AND processID = ? AND processName = ?", [author, context] + process)?.integerValue {
            return existing
        }
        try db.execute("INSERT INTO \(HistorySchema.sources) (author, contextName, processID, processName) VALUES (?, ?, ?, ?)", [author, context] + process)
        return db.lastInsertRowID
    }

    /// Writes the collected changes as one history transaction on `db`, inside the
    /// caller's SQL transaction. Returns the new token's value, or nil when nothing changed.
    func commit(on db: Connection, metadata: TransactionMetadata) throws -> Int64? {
        guard let (payload, count, entities) = try takePayload() else { return nil }
        let source = try sourceID(for: metadata, on: db)
        return try Self.insertTransaction(payload: payload, count: count, entities: entities, sourceID: source, timestamp: Date(), on: db)
    }

    /// Inserts one history transaction with the next token; returns the token.
    static func insertTransaction(payload: [UInt8], count: Int, entities: [String], sourceID: Int64, timestamp: Date, on db: Connection) throws -> Int64 {
        let statement = try db.cachedStatement("""
            INSERT INTO \(HistorySchema.transactions) (token, timestamp, sourceID, changeCount, entities, payload)
            VALUES ((\(HistorySchema.newestTokenSQL)) + 1, ?, ?, ?, ?, ?)
            """)
        try statement.bind([
            .double(timestamp.timeIntervalSince1970),
            .integer(sourceID),
            .integer(Int64(count)),
            .string("," + entities.joined(separator: ",") + ","),
            .data(Data(payload)),
        ])
        try statement.run()
        return db.lastInsertRowID
    }
}
