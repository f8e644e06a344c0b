import Foundation

/// How a ``FetchedResultsController``'s results changed after a save or merge:
/// the removals and insertions of object IDs in the flat order (moves are a removal
/// and an insertion associated with each other), the sections after, and how the
/// sections changed.
///
/// ```swift
/// for await change in controller.changes() {
///     for case .insert(let offset, let id, let movedFrom) in change.difference { print(offset, id, movedFrom as Any) }
/// }
/// ```
public struct FetchedResultsChange: Sendable {
    /// Removals (offsets in the old order) and insertions (offsets in the new order).
    public let difference: CollectionDifference<ObjectID>
    /// The sections after the change (a snapshot, as a diffable data source takes it).
    public var sections: [FetchedResultsSection] { FetchedResultsController.sections(of: rows, id: id, named: sectioned) }
    private let rows: [FetchedResultsController.Row]
    private let id: @Sendable (Int64) -> ObjectID
    private let sectioned: Bool
    /// How the sections' values changed.
    public let sectionDifference: CollectionDifference<AttributeValue>
    /// Objects in the results whose values changed where they stand.
    public let updatedObjectIDs: Set<ObjectID>

    /// Whether nothing in the results changed.
    public var isEmpty: Bool { difference.isEmpty && sectionDifference.isEmpty && updatedObjectIDs.isEmpty }

    /// Where a changed row was or is: its offset, and the number of unchanged rows before it.
    struct Place {
        let key: Int64
        let offset: Int
        let gap: Int
    }

    init(old: [FetchedResultsController.Row], new: [FetchedResultsController.Row], removed: [Place], inserted: [Place], updated: Set<ObjectID>,
         id: @escaping @Sendable (Int64) -> ObjectID, sectioned: Bool) {
        self.rows = new
        self.id = id
        self.sectioned = sectioned
        // Unchanged rows keep their relative order; changed ones sit in the gaps between
        // them. Each gap is compared on its own, so the work is in the changed rows only.
        let before = Dictionary(grouping: removed, by: \.gap), after = Dictionary(grouping: inserted, by: \.gap)
        var changes: [CollectionDifference<ObjectID>.Change] = []
        for gap in Set(before.keys).union(after.keys) {
            let was = before[gap] ?? [], now = after[gap] ?? []
            for step in now.map(\.key).difference(from: was.map(\.key)) {
                switch step {
                case .remove(let offset, let key, _): changes.append(.remove(offset: was[offset].offset, element: id(key), associatedWith: nil))
                case .insert(let offset, let key, _): changes.append(.insert(offset: now[offset].offset, element: id(key), associatedWith: nil))
                }
            }
        }
        difference = (CollectionDifference(changes) ?? CollectionDifference([])!).inferringMoves()
        func sectionValues(_ rows: [FetchedResultsController.Row]) -> [AttributeValue] {
            guard sectioned else { return rows.isEmpty ? [] : [.null] }
            var values: [AttributeValue] = []
            for row in rows where values.last != row.section { values.append(row.section) }
            return values
        }
        sectionDifference = sectionValues(new).difference(from: sectionValues(old))
        let moved = Set(difference.map { change -> ObjectID in
            switch change {
            case .insert(_, let element, _), .remove(_, let element, _): return element
            }
        })
        let changedAfter = Set(inserted.map(\.key))
        var inPlace = updated.filter { changedAfter.contains($0.primaryKey) }.subtracting(moved)
        if sectioned {
            // An object whose section value changed where it stands is an update too.
            let oldSection = Dictionary(removed.map { ($0.key, old[$0.offset].section) }, uniquingKeysWith: { a, _ in a })
            for place in inserted {
                if let was = oldSection[place.key], was != new[place.offset].section, !moved.contains(id(place.key)) { inPlace.insert(id(place.key)) }
            }
        }
        updatedObjectIDs = inPlace
    }
}

/// SQLite's order of values: NULL, then numbers, then text (bytewise), then blobs.
enum SQLiteOrder {
    static func compare(_ a: AttributeValue, _ b: AttributeValue) -> Int {
        let (ca, cb) = (storageClass(a), storageClass(b))
        if ca != cb { return ca < cb ? -1 : 1 }
        switch (a, b) {
        case (.integer(let x), .integer(let y)): return x == y ? 0 : (x < y ? -1 : 1)
        case (.string(let x), .string(let y)):
            for (p, q) in zip(x.utf8, y.utf8) where p != q { return p < q ? -1 : 1 }
            return x.utf8.count == y.utf8.count ? 0 : (x.utf8.count < y.utf8.count ? -1 : 1)
        case (.data(let x), .data(let y)):
            for (p, q) in zip(x, y) where p != q { return p < q ? -1 : 1 }
            return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
        default:
            let (x, y) = (number(a), number(b))
            return x == y ? 0 : (x < y ? -1 : 1)
        }
    }

    private static func storageClass(_ value: AttributeValue) -> Int {
        switch value {
        case .null: return 0
        case .integer, .double, .bool, .date, .objectID: return 1
        case .string, .uuid: return 2
        case .data, .array: return 3
        }
    }

    private static func number(_ value: AttributeValue) -> Double {
        switch value {
        case .integer(let i): return Double(i)
        case .double(let d): return d
        case .bool(let b): return b ? 1 : 0
        case .date(let d): return d.timeIntervalSince1970
        case .objectID(let id): return Double(id.primaryKey)
        default: return 0
        }
    }
}

/// The SELECT behind a controller: key, section value and sort keys, in the request's order.
struct SortKeyQuery: Sendable {
    private let head: String
    private let filter: SQLFragment
    private let order: String
    /// The entity's key column, quoted.
    private let key: String
    /// Ascending or not, per sort descriptor.
    let ascending: [Bool]
    var sortCount: Int { ascending.count }
    /// Whether the request reads other entities (key paths through relationships).
    let usesRelationships: Bool

    init(_ request: FetchRequest, sectionKeyPath: String?, schema: StoreSchema) throws {
        guard request.fetchOffset == 0 else {
            throw TributaryError(.invalidInput, "a fetched results controller takes no fetch offset", location: request.entityName, hint: "leave fetchOffset at 0; fetchLimit is supported")
        }
        let table = try schema.table(request.entityName)
        key = table.key
        var compiler = PredicateCompiler(schema: schema)
        func resolve(_ keyPath: String, _ what: String) throws -> String {
            do {
                return try compiler.resolve(keyPath.split(separator: ".").map(String.init), table: table, alias: "t0").sql
            } catch let error as TributaryError {
                throw TributaryError(.unknownProperty, "cannot \(what) by '\(keyPath)': \(error.message)", location: request.entityName, hint: error.hint)
            }
        }
        let section = try sectionKeyPath.map { try resolve($0, "section") } ?? "NULL"
        let sorts = try request.sortDescriptors.map { try resolve($0.key, "sort") }
        head = "SELECT t0.\(table.key), \(section), \(sorts.joined(separator: ", ")) FROM \(quote(table.name)) t0"
        filter = try request.predicate.map { try compiler.compile($0, table: table, alias: "t0") } ?? SQLFragment("1")
        order = " ORDER BY \(section) ASC, " + zip(sorts, request.sortDescriptors).map { "\($0) \($1.ascending ? "ASC" : "DESC")" }.joined(separator: ", ") + ", t0.\(table.key) ASC"
        ascending = request.sortDescriptors.map(\.ascending)
        usesRelationships = (sectionKeyPath?.contains(".") ?? false) || request.sortDescriptors.contains { $0.key.contains(".") }
            || (request.predicate.map { "\($0)".contains(".") } ?? false)
    }

    /// The SQL and its arguments, for every matching row or only those with `keys`.
    func sql(restrictedTo keys: [Int64]?) -> (String, [AttributeValue]) {
        guard let keys else { return (head + " WHERE " + filter.sql + order, filter.arguments) }
        let list = AttributeValue.keyList(keys)
        return (head + " WHERE (" + filter.sql + ") AND t0.\(key) IN (SELECT value FROM json_each(?))" + order, filter.arguments + [list])
    }
}
