extension PersistentStoreCoordinator {
    /// Moves an object to another key, as its source's history moved it (another program's
    /// `UPDATE t SET id = 7 WHERE id = 1`): one update of the row's key, which history records
    /// as the source did, a delete linked to an insert. Returns false, writing nothing, when
    /// the row is gone, the key is taken, or the table's rows are numbered (a `WITHOUT ROWID`
    /// table's key change keeps its number): the caller deletes and inserts instead.
    ///
    /// ```swift
    /// if try !coordinator.moveObject(tag, toKey: 900, transaction: metadata) { /* delete, then insert */ }
    /// ```
    package func moveObject(_ id: ObjectID, toKey key: Int64, transaction: TransactionMetadata) throws -> Bool {
        let store = try requireStore()
        let table = try store.schema.table(id.entityName)
        guard table.keyMap == nil, key != id.primaryKey else { return false }
        do {
            return try store.write(transaction) { db in
                try db.execute("UPDATE \(quote(table.name)) SET \(table.key) = ? WHERE \(table.key) = ?", [.integer(key), .integer(id.primaryKey)])
                return db.changes > 0
            }
        } catch let error as SQLiteError where error.code == .constraintPrimaryKey || error.code == .constraintUnique {
            return false
        }
    }
}
