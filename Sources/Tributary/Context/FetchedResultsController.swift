import Foundation
import Synchronization

/// A live fetch over a context (Core Data's `NSFetchedResultsController`): the
/// objects matching a request, in its order, optionally in sections, and after
/// every save or merge into the context that changes them, one summary of how
/// they changed.
///
/// ```swift
/// var request = FetchRequest(entityName: "Post", sortDescriptors: [SortDescriptor("title")])
/// let controller = try FetchedResultsController(fetchRequest: request, managedObjectContext: context)
/// try controller.performFetch()
/// Task {
///     for await change in controller.changes() {
///         tableView.apply(change.difference)      // removals and insertions of object IDs
///     }
/// }
/// ```
///
/// After a change, only the changed objects are read again (one query for them),
/// and placed by their sort keys; the request runs again in full only when
/// objects of other entities changed and the request looks at them through a
/// key path. Results are those the store holds for the context (its query
/// generation): unsaved changes show once saved.
// @unchecked Sendable: all state is guarded by the context's lock.
public final class FetchedResultsController: @unchecked Sendable {
    /// One row of the results: its key, sort keys and section value.
    struct Row {
        let key: Int64
        let sortKeys: [AttributeValue]
        let section: AttributeValue
    }

    /// The request; it must have sort descriptors.
    public let fetchRequest: FetchRequest
    /// The context the objects come from.
    public let managedObjectContext: ManagedObjectContext
    /// The key path whose value names each object's section (sections come in its order).
    public let sectionNameKeyPath: String?
    /// Told of each change, in the context's lock, on its queue (see ``FetchedResultsControllerDelegate``).
    public weak var delegate: (any FetchedResultsControllerDelegate)?

    /// Every matching row, in order (the results are its first `fetchLimit`, see ``visible``).
    private var rows: [Row] = []
    /// The results: the rows, or their first `fetchLimit` (Core Data's `fetchLimit` on a controller).
    private var visible: [Row] { fetchRequest.fetchLimit > 0 ? Array(rows.prefix(fetchRequest.fetchLimit)) : rows }
    private var storeID = UUID()
    private var observer: UUID?
    /// The streams of ``changes()``, under a lock of their own, not the context's: a stream
    /// ends (its task cancelled) holding the stream's lock, while a merge yields to it holding
    /// the context's, so ending one under the context's lock deadlocked the two.
    private let continuations = Mutex<[UUID: AsyncStream<FetchedResultsChange>.Continuation]>([:])
    private let query: SortKeyQuery

    /// A controller of `fetchRequest`'s results in `managedObjectContext`.
    ///
    /// ```swift
    /// let controller = try FetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: "tags.@min.name")
    /// ```
    public init(fetchRequest: FetchRequest, managedObjectContext: ManagedObjectContext, sectionNameKeyPath: String? = nil) throws {
        guard !fetchRequest.sortDescriptors.isEmpty else {
            throw TributaryError(.invalidInput, "a fetched results controller needs sort descriptors", location: fetchRequest.entityName, hint: "give the request at least one SortDescriptor")
        }
        self.fetchRequest = fetchRequest
        self.managedObjectContext = managedObjectContext
        self.sectionNameKeyPath = sectionNameKeyPath
        let store = try managedObjectContext.withLock { try managedObjectContext.requireStore() }
        query = try SortKeyQuery(fetchRequest, sectionKeyPath: sectionNameKeyPath, schema: store.schema)
        storeID = store.identifier
    }

    deinit {
        if let observer {
            let context = managedObjectContext
            context.withLock { _ = context.changeObservers.removeValue(forKey: observer) }
        }
        for continuation in continuations.withLock({ Array($0.values) }) { continuation.finish() }
    }

    /// Runs the request and starts following the context's saves and merges.
    public func performFetch() throws {
        let context = managedObjectContext
        try context.withLock {
            rows = try read(keys: nil)
            if observer == nil {
                let key = UUID()
                context.changeObservers[key] = { [weak self] notification in self?.contextDidChange(notification) }
                observer = key
            }
        }
    }

    /// The objects, in order (faults until read).
    public var fetchedObjects: [ManagedObject] {
        let context = managedObjectContext
        return context.withLock { visible.compactMap { try? context.object(with: id($0.key)) } }
    }

    /// The objects' IDs, in order.
    public var fetchedObjectIDs: [ObjectID] {
        managedObjectContext.withLock { visible.map { id($0.key) } }
    }

    /// The sections, in order (one unnamed section without a section key path).
    public var sections: [FetchedResultsSection] {
        managedObjectContext.withLock { Self.sections(of: visible, id: id, named: sectionNameKeyPath != nil) }
    }

    /// Where `object` is: `[section, item]`, or nil.
    public func indexPath(forObject object: ManagedObject) -> IndexPath? {
        let target = object.objectID
        return managedObjectContext.withLock {
            var section = 0, item = 0
            let rows = visible
            for (i, row) in rows.enumerated() {
                if i > 0 && sectionNameKeyPath != nil && row.section != rows[i - 1].section { section += 1; item = 0 }
                if row.key == target.primaryKey && target.entityName == fetchRequest.entityName { return IndexPath(indexes: [section, item]) }
                item += 1
            }
            return nil
        }
    }

    /// The object at `indexPath` (`[section, item]`).
    public func object(at indexPath: IndexPath) throws -> ManagedObject {
        let ids = sections[indexPath[0]].objectIDs
        return try managedObjectContext.object(with: ids[indexPath[1]])
    }

    /// Each change from now on, as a stream (it ends with the controller).
    public func changes() -> AsyncStream<FetchedResultsChange> {
        let (stream, continuation) = AsyncStream<FetchedResultsChange>.makeStream()
        let key = UUID()
        continuations.withLock { $0[key] = continuation }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            _ = self.continuations.withLock { $0.removeValue(forKey: key) }
        }
        return stream
    }

    // MARK: Following changes

    /// Updates the rows after a save or merge (in the context's lock) and reports the change.
    func contextDidChange(_ notification: ContextDidSave) {
        let entity = fetchRequest.entityName
        let all = notification.insertedObjectIDs.union(notification.updatedObjectIDs).union(notification.deletedObjectIDs)
        var mine = Set(all.filter { $0.entityName == entity }.map(\.primaryKey))
        let others = all.contains { $0.entityName != entity }
        let refetch = others && query.usesRelationships
        guard !mine.isEmpty || refetch else { return }
        let old = rows
        // Where the changed rows were: (key, offset, unchanged rows before it); and the unchanged rows.
        var removed: [FetchedResultsChange.Place] = []
        var kept: [Int32] = []   // offsets of the unchanged rows in `old` (no copies of rows)
        let fresh: [Row]
        do {
            if refetch {
                mine = Set(old.map(\.key))
                fresh = try read(keys: nil)
                mine.formUnion(fresh.map(\.key))
            } else {
                fresh = try read(keys: Array(mine))
            }
        } catch {
            return   // the store could not be read: the rows stay as they were until the next change
        }
        kept.reserveCapacity(old.count)
        for offset in old.indices {
            if mine.contains(old[offset].key) { removed.append(.init(key: old[offset].key, offset: offset, gap: kept.count)) } else { kept.append(Int32(offset)) }
        }
        // Each fresh row goes after the unchanged rows that precede it (a binary search).
        var inserted: [FetchedResultsChange.Place] = []
        var result: [Row] = []
        result.reserveCapacity(kept.count + fresh.count)
        var copied = 0
        for (rank, row) in fresh.enumerated() {
            var low = copied, high = kept.count
            while low < high {
                let middle = (low + high) / 2
                if precedes(old[Int(kept[middle])], row) { low = middle + 1 } else { high = middle }
            }
            for i in copied..<low { result.append(old[Int(kept[i])]) }
            copied = low
            inserted.append(.init(key: row.key, offset: low + rank, gap: low))
            result.append(row)
        }
        for i in copied..<kept.count { result.append(old[Int(kept[i])]) }
        rows = result
        let updated = Set(notification.updatedObjectIDs.filter { $0.entityName == entity })
        let (storeID, entityName) = (storeID, fetchRequest.entityName)
        let makeID: @Sendable (Int64) -> ObjectID = { ObjectID(storeID: storeID, entityName: entityName, primaryKey: $0) }
        let limit = fetchRequest.fetchLimit
        let (before, after) = limit > 0 ? (Array(old.prefix(limit)), Array(rows.prefix(limit))) : (old, rows)
        if limit > 0 { (removed, inserted) = Self.places(before, after, changed: mine) }
        let change = FetchedResultsChange(old: before, new: after, removed: removed, inserted: inserted, updated: updated, id: makeID, sectioned: sectionNameKeyPath != nil)
        guard !change.isEmpty else { return }
        if let delegate { tell(delegate, change, old: before, new: after) }
        for continuation in continuations.withLock({ Array($0.values) }) { continuation.yield(change) }
    }

    /// For limited results: the rows that left or changed in `old` and the rows that entered
    /// or changed in `new`, each with the number of rows kept in both before it.
    private static func places(_ old: [Row], _ new: [Row], changed: Set<Int64>) -> ([FetchedResultsChange.Place], [FetchedResultsChange.Place]) {
        let kept = Set(old.map(\.key)).intersection(new.map(\.key)).subtracting(changed)
        func places(_ rows: [Row]) -> [FetchedResultsChange.Place] {
            var result: [FetchedResultsChange.Place] = [], gap = 0
            for (offset, row) in rows.enumerated() {
                if kept.contains(row.key) { gap += 1 } else { result.append(.init(key: row.key, offset: offset, gap: gap)) }
            }
            return result
        }
        return (places(old), places(new))
    }

    /// Reads rows (all, or those with `keys`) in the request's order.
    private func read(keys: [Int64]?) throws -> [Row] {
        let context = managedObjectContext
        let width = query.sortCount
        return try context.withReader { db in
            let (sql, arguments) = query.sql(restrictedTo: keys)
            let statement = try db.makeStatement(sql)
            try statement.bind(arguments)
            var rows: [Row] = []
            while try statement.step() {
                var sortKeys: [AttributeValue] = []
                sortKeys.reserveCapacity(width)
                for i in 0..<width { sortKeys.append(statement.value(at: i + 2)) }
                rows.append(Row(key: statement.int64(at: 0), sortKeys: sortKeys, section: statement.value(at: 1)))
            }
            return rows
        }
    }

    /// Whether `a` comes before `b`: by section, sort keys (each ascending or not), then key, as SQLite orders them.
    private func precedes(_ a: Row, _ b: Row) -> Bool {
        let section = SQLiteOrder.compare(a.section, b.section)
        if section != 0 { return section < 0 }
        for (i, ascending) in query.ascending.enumerated() {
            let order = SQLiteOrder.compare(a.sortKeys[i], b.sortKeys[i])
            if order != 0 { return ascending ? order < 0 : order > 0 }
        }
        return a.key < b.key
    }

    func id(_ key: Int64) -> ObjectID {
        ObjectID(storeID: storeID, entityName: fetchRequest.entityName, primaryKey: key)
    }

    static func sections(of rows: [Row], id: (Int64) -> ObjectID, named: Bool) -> [FetchedResultsSection] {
        var sections: [FetchedResultsSection] = []
        for row in rows {
            if !sections.isEmpty, !named || sections[sections.count - 1].value == row.section {
                sections[sections.count - 1].objectIDs.append(id(row.key))
            } else {
                sections.append(FetchedResultsSection(value: named ? row.section : .null, objectIDs: [id(row.key)]))
            }
        }
        return sections
    }
}

/// One section of a controller's results.
public struct FetchedResultsSection: Sendable, Equatable {
    /// The section key path's value for its objects (nil without a section key path).
    public var value: AttributeValue
    /// Its objects' IDs, in order.
    public var objectIDs: [ObjectID]
    /// The section's name: its value as text.
    public var name: String { value.isNull ? "" : value.description }
    /// The number of objects in it.
    public var numberOfObjects: Int { objectIDs.count }
}
