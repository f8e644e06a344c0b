import Foundation

extension HistoryRecorder {
    /// The process's ID and executable name, recorded with each transaction.
    static let processID = Int32(getpid())
    static let processName = ProcessInfo.processInfo.processName

    /// Writes the collected changes as one history transaction on `db`, inside the
    /// caller's SQL transaction. Returns the new token's value, or nil when nothing changed.
    func commit(on db: Connection, metadata: TransactionMetadata) throws -> Int64? {
        let changes = drain()
        guard !changes.isEmpty else { return nil }
        var entities: [String] = []
        for change in changes where !entities.contains(change.entity) { entities.append(change.entity) }
        let payload = try HistoryPayload.encode(changes)
        let statement = try db.cachedStatement("""
            INSERT INTO \(HistorySchema.transactions) (timestamp, author, contextName, processID, processName, changeCount, entities, payload)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """)
        try statement.bind([
            .double(Date().timeIntervalSince1970),
            metadata.author.map { .string($0) } ?? .null,
            metadata.contextName.map { .string($0) } ?? .null,
            .integer(Int64(Self.processID)),
            .string(Self.processName),
            .integer(Int64(changes.count)),
            .string("," + entities.joined(separator: ",") + ","),
            .data(Data(payload)),
        ])
        try statement.run()
        return db.lastInsertRowID
    }
}
