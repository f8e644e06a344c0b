/// How a save resolves a conflict: an object changed in the context whose row
/// was changed in the store since the context read it (optimistic locking on
/// the row's version), or a new object whose unique values match an existing
/// row. Core Data's merge policies, by the same names.
///
/// ```swift
/// context.mergePolicy = .mergeByPropertyObjectTrump
/// try context.save()
/// ```
public enum MergePolicy: Sendable, Equatable {
    /// Fail the save with a ``MergeConflictError`` listing every conflict, writing nothing (the default).
    case error
    /// Property by property, the store's changes win over the context's; the context's other changes are written.
    case mergeByPropertyStoreTrump
    /// Property by property, the context's changes win; the store's other changes are kept.
    case mergeByPropertyObjectTrump
    /// The context's whole object is written over the store's row.
    case overwrite
    /// The context's changes to conflicting objects are dropped; they take the store's values.
    case rollback
}
