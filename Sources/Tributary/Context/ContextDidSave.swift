/// What one save changed: the IDs of the objects inserted, updated and deleted
/// (Core Data's `NSManagedObjectContextDidSave` user info). Merging it into
/// another context brings that context up to date.
///
/// ```swift
/// for await saved in context.didSaveNotifications() {
///     otherContext.mergeChanges(fromContextDidSave: saved)
/// }
/// ```
public struct ContextDidSave: Sendable, Equatable {
    /// Objects inserted (permanent IDs after a save to the store).
    public var insertedObjectIDs: Set<ObjectID>
    /// Objects updated, including those whose relationships changed.
    public var updatedObjectIDs: Set<ObjectID>
    /// Objects deleted, including those deleted by cascade rules.
    public var deletedObjectIDs: Set<ObjectID>
    /// The history token of the save, when the store tracks history and the save wrote to the store.
    public var historyToken: PersistentHistoryToken?
    /// Temporary IDs that became permanent in this save.
    var permanentIDs: [ObjectID: ObjectID] = [:]

    /// A notification from its parts.
    public init(insertedObjectIDs: Set<ObjectID> = [], updatedObjectIDs: Set<ObjectID> = [], deletedObjectIDs: Set<ObjectID> = [], historyToken: PersistentHistoryToken? = nil) {
        self.insertedObjectIDs = insertedObjectIDs
        self.updatedObjectIDs = updatedObjectIDs
        self.deletedObjectIDs = deletedObjectIDs
        self.historyToken = historyToken
    }

    /// The changes of history transactions, in the form `ManagedObjectContext.mergeChanges(fromRemoteContextSave:into:)` takes.
    ///
    /// ```swift
    /// let changes = ContextDidSave(transactions: try coordinator.fetchHistory(.fetchHistory(after: token)))
    /// ManagedObjectContext.mergeChanges(fromRemoteContextSave: changes, into: [viewContext])
    /// ```
    public init(transactions: [PersistentHistoryTransaction]) {
        self.init()
        for transaction in transactions {
            for change in transaction.changes {
                switch change.changeType {
                case .insert: insertedObjectIDs.insert(change.changedObjectID)
                case .update: updatedObjectIDs.insert(change.changedObjectID)
                case .delete: deletedObjectIDs.insert(change.changedObjectID)
                }
            }
            historyToken = max(historyToken ?? transaction.token, transaction.token)
        }
        updatedObjectIDs.subtract(deletedObjectIDs)
        insertedObjectIDs.subtract(deletedObjectIDs)
    }

    /// The changes of an ``PersistentHistoryTransaction/objectIDNotification`` (object IDs by
    /// change type); a deletion is final, so a deleted object is neither inserted nor updated.
    ///
    /// ```swift
    /// let changes = ContextDidSave(objectIDNotification: transaction.objectIDNotification)
    /// ```
    public init(objectIDNotification: [PersistentHistoryChangeType: Set<ObjectID>]) {
        self.init(insertedObjectIDs: objectIDNotification[.insert] ?? [], updatedObjectIDs: objectIDNotification[.update] ?? [],
                  deletedObjectIDs: objectIDNotification[.delete] ?? [])
        updatedObjectIDs.subtract(deletedObjectIDs)
        insertedObjectIDs.subtract(deletedObjectIDs)
    }

    /// Whether the save changed nothing.
    public var isEmpty: Bool { insertedObjectIDs.isEmpty && updatedObjectIDs.isEmpty && deletedObjectIDs.isEmpty }
}
