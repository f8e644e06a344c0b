/// What `ManagedObjectContext.execute(_:)` returns for a history
/// request, following the request's ``HistoryResultType`` (Core Data's `NSPersistentHistoryResult`).
///
/// ```swift
/// let result = try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: token))
/// for transaction in result.transactions ?? [] { print(transaction.author ?? "-") }
/// ```
public enum PersistentHistoryResult: Sendable {
    /// Transactions (with their changes, unless the request asked for transactions only).
    case transactions([PersistentHistoryTransaction])
    /// Changes, for ``HistoryResultType/changesOnly``.
    case changes([PersistentHistoryChange])
    /// The number of matching transactions, for ``HistoryResultType/count``.
    case count(Int)
    /// The IDs of the objects changed, each once, for ``HistoryResultType/objectIDs``.
    case objectIDs([ObjectID])
    /// What a delete request deleted.
    case deleted(HistoryPruneResult)

    /// The transactions, when the result holds them.
    public var transactions: [PersistentHistoryTransaction]? {
        if case .transactions(let transactions) = self { return transactions }
        return nil
    }
}
