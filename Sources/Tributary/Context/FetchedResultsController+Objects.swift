import Foundation

extension FetchedResultsController {
    /// Tells the delegate of `change`, in both styles (in the context's lock, on its queue):
    /// the difference, then `willChangeContent`, section and object changes, `didChangeContent`.
    func tell(_ delegate: any FetchedResultsControllerDelegate, _ change: FetchedResultsChange, old: [Row], new: [Row]) {
        delegate.controller(self, didChange: change)
        delegate.controllerWillChangeContent(self)
        let named = sectionNameKeyPath != nil
        let oldSections = Self.sections(of: old, id: id, named: named), newSections = change.sections
        for step in change.sectionDifference {
            switch step {
            case .remove(let offset, _, _):
                if offset < oldSections.count { delegate.controller(self, didChange: oldSections[offset], atSectionIndex: offset, for: .delete) }
            case .insert(let offset, _, _):
                if offset < newSections.count { delegate.controller(self, didChange: newSections[offset], atSectionIndex: offset, for: .insert) }
            }
        }
        let oldPath = Self.indexPaths(old, named: named), newPath = Self.indexPaths(new, named: named)
        var moves: [Int: Int] = [:]   // old offset -> new offset
        for case .insert(let offset, _, let from?) in change.difference { moves[from] = offset }
        for step in change.difference {
            switch step {
            case .remove(let offset, let id, _):
                if let to = moves[offset] {
                    report(delegate, id, oldPath(offset), .move, newPath(to))
                } else {
                    report(delegate, id, oldPath(offset), .delete, nil)
                }
            case .insert(let offset, let id, let from):
                if from == nil { report(delegate, id, nil, .insert, newPath(offset)) }
            }
        }
        if !change.updatedObjectIDs.isEmpty {
            let keys = Set(change.updatedObjectIDs.map(\.primaryKey))
            var was: [Int64: Int] = [:]   // updated key -> old offset, in one pass
            for (offset, row) in old.enumerated() where keys.contains(row.key) { was[row.key] = offset }
            for (offset, row) in new.enumerated() where keys.contains(row.key) {
                report(delegate, id(row.key), was[row.key].map(oldPath) ?? newPath(offset), .update, newPath(offset))
            }
        }
        delegate.controllerDidChangeContent(self)
    }

    private func report(_ delegate: any FetchedResultsControllerDelegate, _ id: ObjectID, _ from: IndexPath?, _ type: FetchedResultsChangeType, _ to: IndexPath?) {
        let context = managedObjectContext
        // A deleted object has left the context: it is reported as an unregistered object.
        guard let object = context.registeredObject(for: id) ?? (try? context.makeObject(context.layout(id.entityName), id: id)) else { return }
        delegate.controller(self, didChange: object, at: from, for: type, newIndexPath: to)
    }

    /// The index path (`[section, item]`) of each flat offset of `rows`.
    static func indexPaths(_ rows: [Row], named: Bool) -> (Int) -> IndexPath {
        guard named else { return { IndexPath(indexes: [0, $0]) } }
        var paths: [IndexPath] = []
        paths.reserveCapacity(rows.count)
        var section = 0, item = 0
        for (i, row) in rows.enumerated() {
            if i > 0 && row.section != rows[i - 1].section { section += 1; item = 0 }
            paths.append(IndexPath(indexes: [section, item]))
            item += 1
        }
        return { paths[$0] }
    }
}
