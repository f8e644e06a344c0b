extension StoreDatabase {
    /// Runs `body` in one write transaction whose history is recorded in parts: each call
    /// of the `endHistoryPart` closure writes the changes made since the previous call as
    /// one history transaction, inside this SQL transaction, so a long write (an import of
    /// millions of rows) holds one part's history in memory, not all of it. What is left
    /// is recorded at the commit. Data and every part commit together, or none do.
    ///
    /// ```swift
    /// try database.writeInParts(metadata) { db, endHistoryPart in
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
