/// Reads the history transactions in token order with what their chain hash covers:
/// for hashing history written before the chain, and for verifying it.
enum HistoryChainWalk {
    /// One transaction: the fields its hash covers (the payload valid only inside the
    /// call) and the hash stored with it.
    struct Row {
        var entry: HistoryChain.Entry
        var storedHash: UnsafeRawBufferPointer?
    }

    /// Calls `body` for every kept transaction, oldest first. A transaction whose source
    /// row is gone reads with an empty source, so its hash no longer matches.
    static func rows(on db: Connection, _ body: (Row) throws -> Void) throws {
        let statement = try db.makeStatement("""
            SELECT h.token, h.timestamp, s.author, s.contextName, s.processID, s.processName, h.reason, h.changeCount, h.entities, h.payload, h.hash
            FROM \(HistorySchema.transactions) h LEFT JOIN \(HistorySchema.sources) s ON s.id = h.sourceID ORDER BY h.token
            """)
        while try statement.step() {
            func text(_ i: Int) -> String? { statement.isNull(at: i) ? nil : statement.string(at: i) }
            let source = HistorySource(author: text(2), contextName: text(3), processID: Int32(truncatingIfNeeded: statement.int64(at: 4)), processName: text(5))
            try statement.withBytes(at: 9) { payload in
                let entry = HistoryChain.Entry(token: statement.int64(at: 0), timestamp: statement.double(at: 1), source: source, reason: text(6),
                                               changeCount: statement.int64(at: 7), entities: text(8) ?? "", payload: payload)
                if statement.isNull(at: 10) {
                    try body(Row(entry: entry, storedHash: nil))
                } else {
                    try statement.withBytes(at: 10) { try body(Row(entry: entry, storedHash: $0)) }
                }
            }
        }
    }
}
