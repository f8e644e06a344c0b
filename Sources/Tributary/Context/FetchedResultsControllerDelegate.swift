import Foundation

/// Told of each change of a ``FetchedResultsController``'s results, on the context's queue
/// (the main queue for a main-queue context). Implement the difference style
/// (`controller(_:didChange:)` with a ``FetchedResultsChange``), Core Data's per-object style
/// (``controllerWillChangeContent(_:)``, ``controller(_:didChange:at:for:newIndexPath:)``,
/// ``controllerDidChangeContent(_:)``), or both: every method has an empty default.
///
/// ```swift
/// final class QuakeList: FetchedResultsControllerDelegate {
///     func controller(_ controller: FetchedResultsController, didChange change: FetchedResultsChange) { apply(change) }
/// }
///
/// // A main-actor type over a main-queue context (Swift 6): the calls come on the main queue.
/// @MainActor final class QuakeTable: @preconcurrency FetchedResultsControllerDelegate {
///     func controllerWillChangeContent(_ controller: FetchedResultsController) { beginUpdates() }
///     func controller(_ controller: FetchedResultsController, didChange anObject: ManagedObject, at indexPath: IndexPath?,
///                     for type: FetchedResultsChangeType, newIndexPath: IndexPath?) { record(type, indexPath, newIndexPath) }
///     func controllerDidChangeContent(_ controller: FetchedResultsController) { endUpdates() }
/// }
/// ```
public protocol FetchedResultsControllerDelegate: AnyObject, Sendable {
    /// The results changed as `change` says (the difference style).
    func controller(_ controller: FetchedResultsController, didChange change: FetchedResultsChange)
    /// Per-object style: changes are about to be reported.
    func controllerWillChangeContent(_ controller: FetchedResultsController)
    /// Per-object style: a section was inserted or deleted (index in the old sections for a
    /// delete, in the new ones for an insert). Called before the objects' changes.
    func controller(_ controller: FetchedResultsController, didChange section: FetchedResultsSection, atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType)
    /// Per-object style: one object was inserted (at `newIndexPath`), deleted (from
    /// `indexPath`), moved (both) or updated in place (both, equal), as Core Data reports them.
    func controller(_ controller: FetchedResultsController, didChange anObject: ManagedObject, at indexPath: IndexPath?, for type: FetchedResultsChangeType, newIndexPath: IndexPath?)
    /// Per-object style: every change has been reported.
    func controllerDidChangeContent(_ controller: FetchedResultsController)
}

extension FetchedResultsControllerDelegate {
    public func controller(_ controller: FetchedResultsController, didChange change: FetchedResultsChange) {}
    public func controllerWillChangeContent(_ controller: FetchedResultsController) {}
    public func controller(_ controller: FetchedResultsController, didChange section: FetchedResultsSection, atSectionIndex sectionIndex: Int, for type: FetchedResultsChangeType) {}
    public func controller(_ controller: FetchedResultsController, didChange anObject: ManagedObject, at indexPath: IndexPath?, for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {}
    public func controllerDidChangeContent(_ controller: FetchedResultsController) {}
}

/// What happened to an object or a section (Core Data's `NSFetchedResultsChangeType`).
public enum FetchedResultsChangeType: Sendable, Equatable {
    case insert
    case delete
    case move
    case update
}
