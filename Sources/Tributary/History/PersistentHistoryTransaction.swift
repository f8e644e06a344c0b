import Foundation

/// One saved transaction and its changes (Core Data's `NSPersistentHistoryTransaction`).
///
/// ```swift
/// for transaction in try coordinator.fetchHistory(PersistentHistoryChangeRequest.fetchHistory(after: token)) {
///     print(transaction.token, transaction.author ?? "-", transaction.changes.count)
/// }
/// ```
public struct PersistentHistoryTransaction: Sendable, Equatable {
    /// The transaction's position.
    public let token: PersistentHistoryToken
    /// When it committed.
    public let timestamp: Date
    /// The writer's `transactionAuthor` (or the CLI's `--author`).
    public let author: String?
    /// The writing context's name.
    public let contextName: String?
    /// The writing process's ID.
    public let processID: Int32
    /// The writing executable's name.
    public let processName: String
    /// Why it was made (``TransactionMetadata/reason``), when the writer said.
    public let reason: String?
    /// The store's ID.
    public let storeID: UUID
    /// The number of changes (present even when the changes were not fetched).
    public let changeCount: Int
    /// The changes, in the order they were made (empty for transaction-only results).
    public let changes: [PersistentHistoryChange]
    /// For a schema transaction (a change of the store's model), what changed and the model
    /// after; nil for every other transaction. A schema transaction has no changes.
    public internal(set) var schemaChange: SchemaChange?

    /// The object IDs inserted, updated and deleted, in the form
    /// `ManagedObjectContext.mergeChanges(fromRemoteContextSave:into:)` takes.
    ///
    /// ```swift
    /// ManagedObjectContext.mergeChanges(fromRemoteContextSave: transaction.objectIDNotification, into: [viewContext])
    /// ```
    public var objectIDNotification: [PersistentHistoryChangeType: Set<ObjectID>] {
        var result: [PersistentHistoryChangeType: Set<ObjectID>] = [:]
        for change in changes { result[change.changeType, default: []].insert(change.changedObjectID) }
        return result
    }
}
