import Foundation

/// How much history a store keeps (or how much lies after a token).
///
/// ```swift
/// let size = try coordinator.historySize()
/// print(size.transactions, size.changes, size.payloadBytes)
/// ```
public struct HistorySize: Sendable, Equatable, Codable {
    /// Transactions.
    public var transactions: Int
    /// Changes in them.
    public var changes: Int
    /// Bytes of their stored (compressed) payloads.
    public var payloadBytes: Int
}

extension PersistentStoreCoordinator {
    /// The history kept after `token` (all of it when nil): transactions, changes and payload bytes.
    ///
    /// ```swift
    /// let lag = try coordinator.historySize(after: consumer.token).changes
    /// ```
    public func historySize(after token: PersistentHistoryToken? = nil) throws -> HistorySize {
        let store = try requireHistoryStore()
        if let token { try token.check(belongsTo: store.identifier) }
        return try store.database.read { db in
            let statement = try db.makeStatement("SELECT count(*), coalesce(sum(changeCount), 0), coalesce(sum(length(payload)), 0) FROM \(HistorySchema.transactions) WHERE token > ?")
            try statement.bind([.integer(token?.value ?? 0)])
            _ = try statement.step()
            return HistorySize(transactions: Int(statement.int64(at: 0)), changes: Int(statement.int64(at: 1)), payloadBytes: Int(statement.int64(at: 2)))
        }
    }
}
