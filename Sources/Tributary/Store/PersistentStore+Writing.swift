import Foundation

extension PersistentStore {
    /// Runs `body` in a write transaction on the store's writer; when the store tracks
    /// history, the changes it made are recorded in the same transaction under `metadata`
    /// (the recorder is one of the writer's ``WriteParticipant``s), and listeners of the
    /// store are told of the commit when it posts remote changes.
    func write<T>(_ metadata: TransactionMetadata = TransactionMetadata(), _ body: (Connection) throws -> T) throws -> T {
        try writeReturningToken(metadata, body).0
    }

    /// ``write(_:_:)``, also giving the history token the transaction recorded (nil when none).
    /// With `marking`, the token is marked there before the transaction commits (so no
    /// reader sees the transaction unmarked) and unmarked if the commit fails.
    func writeReturningToken<T>(_ metadata: TransactionMetadata = TransactionMetadata(), marking: LocalCommits? = nil,
                                _ body: (Connection) throws -> T) throws -> (T, Int64?) {
        do {
            let done = try database.writeTransaction { db in
                recorder.prepare(metadata, marking: marking)
                return try body(db)
            }
            return (done.result, done.written)
        } catch let error as SQLiteError {
            throw KeyMap.refusal(ofWriteFailing: error) ?? error
        }
    }

    /// Runs `body` in one write transaction whose history is recorded in parts: each call
    /// of the `endHistoryPart` closure writes the changes made since the previous call as
    /// one history transaction, inside this SQL transaction, so a long write (an import of
    /// millions of rows) holds one part's history in memory, not all of it. What is left
    /// is recorded at the commit. Data and every part commit together, or none do.
    ///
    /// ```swift
    /// try store.writeInParts(metadata) { db, endHistoryPart in
    ///     for batch in batches { try insert(batch, on: db); try endHistoryPart() }
    /// }
    /// ```
    func writeInParts<T>(_ metadata: TransactionMetadata, _ body: (Connection, _ endHistoryPart: () throws -> Void) throws -> T) throws -> T {
        try write(metadata) { db in
            try body(db) {
                if recorder.isEnabled { _ = try recorder.commit(on: db, metadata: metadata) }
            }
        }
    }
}
