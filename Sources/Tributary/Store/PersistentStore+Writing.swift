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
                let result = try runsDatabaseTriggers(on: db) ? writingThroughCaptureTriggers(on: db) { try body(db) } : body(db)
                try appendTriggeredWrites(on: db)
                return result
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
                try appendTriggeredWrites(on: db)
                if recorder.isEnabled { _ = try recorder.commit(on: db, metadata: metadata) }
            }
        }
    }

    /// Runs `body`, inside a write transaction, as another program's statements run: with the
    /// stored triggers on and the pre-update hook paused. A `WITHOUT ROWID` table is written
    /// this way (its hook events carry no rowid to tell its rows apart): its capture triggers
    /// number new keys in its ``KeyMap``, move a number with its key, and log the changes,
    /// which the transaction folds into its own history before it commits.
    /// Nested, it runs `body` as it is.
    func writingThroughCaptureTriggers<T>(on db: Connection, _ body: () throws -> T) throws -> T {
        if recorder.isPaused { return try body() }
        recorder.isPaused = true
        recorder.hasTriggeredWrites = true
        defer { recorder.isPaused = false }
        return try db.withMainTriggers(body)
    }

    /// Whether this transaction's writes run the database's own triggers: an adopted database
    /// with triggers of its own (``DatabaseTriggers``), captured, unless the description says not
    /// to. They then run as another program's writes do (``writingThroughCaptureTriggers(on:_:)``).
    private func runsDatabaseTriggers(on db: Connection) throws -> Bool {
        guard schema.isAdopted, capture != nil, description.runsDatabaseTriggers else { return false }
        return try databaseTriggers.present(on: db)
    }

    /// Folds what the transaction's statements logged with the stored triggers on
    /// (``writingThroughCaptureTriggers(on:_:)``) into its history, as its own changes.
    private func appendTriggeredWrites(on db: Connection) throws {
        guard recorder.hasTriggeredWrites, let capture, recorder.isEnabled else { return }
        recorder.hasTriggeredWrites = false
        try recorder.append(try capture.foldOwnWrites(on: db))
    }
}
