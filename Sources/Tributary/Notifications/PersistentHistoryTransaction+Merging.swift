import Foundation

extension Sequence where Element == PersistentHistoryTransaction {
    /// The object IDs a batch of transactions inserted, updated and deleted, in the form
    /// `mergeChanges(fromRemoteContextSave:into:)` takes. An object changed in several
    /// ways appears under each; merging treats a deletion as final.
    ///
    /// ```swift
    /// await watcher.run { batch in
    ///     let changes = batch.objectIDNotification
    ///     print(changes[.insert]?.count ?? 0, "new objects")
    /// }
    /// ```
    public var objectIDNotification: [PersistentHistoryChangeType: Set<ObjectID>] {
        var result: [PersistentHistoryChangeType: Set<ObjectID>] = [:]
        for transaction in self {
            for (type, ids) in transaction.objectIDNotification { result[type, default: []].formUnion(ids) }
        }
        return result
    }
}
