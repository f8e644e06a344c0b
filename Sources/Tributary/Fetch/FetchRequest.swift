/// What a fetch returns.
public enum FetchResultType: Sendable, Equatable {
    /// Objects (the default, Core Data's managed object result type): a context's
    /// `ManagedObjectContext.fetch(_:)` makes objects; a coordinator, which has none, returns rows.
    case managedObject
    /// Rows as values by property name (Core Data's dictionary result type); a context
    /// returns them from ``ManagedObjectContext/fetchRows(_:)``.
    case dictionary
    /// Object IDs only; a context returns them from ``ManagedObjectContext/fetchObjectIDs(_:)``.
    case objectID
    /// The number of matching rows.
    case count
}

/// A sort key: an attribute or a key path through to-one relationships.
///
/// ```swift
/// SortDescriptor("createdAt", ascending: false)
/// try SortDescriptor(parsing: "title:desc")
/// ```
public struct SortDescriptor: Sendable, Equatable {
    /// The key path.
    public var key: String
    /// Ascending (the default) or descending.
    public var ascending: Bool

    /// A sort descriptor.
    public init(_ key: String, ascending: Bool = true) {
        self.key = key
        self.ascending = ascending
    }

    /// Parses `key`, `key:asc` or `key:desc`, as the CLI's `--sort` takes them; a name that
    /// is not a plain word goes in backticks:
    ///
    /// ```swift
    /// try SortDescriptor(parsing: "`unit price`:desc")   // key "unit price", descending
    /// ```
    public init(parsing text: String) throws {
        var quoted = false, colon: String.Index?
        for index in text.indices {
            if text[index] == "`" { quoted.toggle() } else if text[index] == ":", !quoted { colon = index }
        }
        guard !quoted else {
            throw TributaryError(.invalidInput, "unterminated quoted name in sort key '\(text)'", hint: "close the name with `, as in --sort '`unit price`:desc'")
        }
        let key = String(colon.map { text[..<$0] } ?? text[...]).replacingOccurrences(of: "`", with: "")
        guard !key.isEmpty else {
            throw TributaryError(.invalidInput, "empty sort key", hint: "write --sort key or --sort key:desc")
        }
        var ascending = true
        if let colon {
            let direction = text[text.index(after: colon)...]
            switch direction.lowercased() {
            case "asc", "ascending": ascending = true
            case "desc", "descending": ascending = false
            default: throw TributaryError(.invalidInput, "unknown sort direction '\(direction)' in '\(text)'", hint: "use asc or desc")
            }
        }
        self.init(key, ascending: ascending)
    }
}

/// A request for rows of one entity (Core Data's `NSFetchRequest`).
///
/// ```swift
/// var request = FetchRequest(entityName: "Post")
/// request.predicate = try StorePredicate(format: "title BEGINSWITH[c] %@", "swift")
/// request.sortDescriptors = [SortDescriptor("createdAt", ascending: false)]
/// request.fetchLimit = 20
/// let rows = try coordinator.fetch(request)
/// ```
public struct FetchRequest: Sendable, Equatable {
    /// The entity fetched.
    public var entityName: String
    /// Which rows; all when nil.
    public var predicate: StorePredicate?
    /// Order of the rows; by primary key when empty.
    public var sortDescriptors: [SortDescriptor]
    /// At most this many rows; 0 means no limit.
    public var fetchLimit = 0
    /// Skip this many rows first.
    public var fetchOffset = 0
    /// Rows per batch when enumerating; 0 means the default of 1,000.
    public var fetchBatchSize = 0
    /// What the fetch returns.
    public var resultType: FetchResultType = .managedObject
    /// The properties included in dictionary results; all attributes and to-one relationships when nil.
    /// Key paths are allowed: through to-one relationships (`"author.name"`), and a to-many
    /// relationship's `@count`, `@min.KEY`, `@max.KEY`, `@sum.KEY` or `@avg.KEY` (`"tags.@count"`);
    /// each row's key is the path as written. Aggregates over the fetched rows (Core Data's
    /// expression descriptions: `"@count"`, `"@sum.magnitude"`, `"average:(magnitude)"`…)
    /// make one row of all the rows, or one per group with ``propertiesToGroupBy``.
    ///
    /// ```swift
    /// request.propertiesToFetch = ["title", "tags.@count", "tags.@min.name"]
    ///
    /// var stats = FetchRequest(entityName: "Quake")
    /// stats.resultType = .dictionary
    /// stats.propertiesToFetch = ["count:(code)", "@sum.magnitude", "@avg.magnitude"]
    /// let row = try coordinator.fetch(stats)[0]   // row["count:(code)"] == .integer(120)
    /// ```
    public var propertiesToFetch: [String]?
    /// Key paths whose values make the groups of a dictionary fetch (Core Data's
    /// `propertiesToGroupBy`): one row per group, holding the grouped values and the
    /// aggregates in ``propertiesToFetch`` (`@count`, `@sum.KEY`, `@avg.KEY`, `@min.KEY`,
    /// `@max.KEY`, or Core Data's function form `count:(KEY)`, `sum:(KEY)`, `average:(KEY)`,
    /// `min:(KEY)`, `max:(KEY)`; the row's key is the text as written). As in Core Data, the
    /// request must ask for ``FetchResultType/dictionary`` results and every other property
    /// fetched must be grouped; otherwise the fetch throws. Such rows stand for no one object:
    /// their ``FetchedRow/objectID`` has primary key 0.
    ///
    /// ```swift
    /// var request = FetchRequest(entityName: "Quake", sortDescriptors: [SortDescriptor("@count", ascending: false)])
    /// request.resultType = .dictionary
    /// request.propertiesToGroupBy = ["place"]
    /// request.propertiesToFetch = ["place", "@count", "@avg.magnitude", "max:(magnitude)"]
    /// request.havingPredicate = try StorePredicate(format: "@count >= 2")
    /// for row in try context.fetchRows(request) {
    ///     print(row["place"] ?? .null, row["@count"] ?? .null)   // "Tokyo", 12
    /// }
    /// ```
    public var propertiesToGroupBy: [String]?
    /// Which groups a grouped fetch keeps (Core Data's `havingPredicate`): a predicate over
    /// the grouped key paths and aggregates (`@count > 1`, `@sum.magnitude >= 10`, or
    /// `%K > 1` with `"count:(code)"`). Needs ``propertiesToGroupBy``.
    ///
    /// ```swift
    /// request.havingPredicate = try StorePredicate(format: "@avg.magnitude > %@", 5.0)
    /// ```
    public var havingPredicate: StorePredicate?
    /// Whether a dictionary fetch returns each distinct combination of the values in
    /// ``propertiesToFetch`` once (Core Data's `returnsDistinctResults`). Needs dictionary
    /// results and ``propertiesToFetch``, as in Core Data; the rows stand for no one object.
    ///
    /// ```swift
    /// var request = FetchRequest(entityName: "Quake", sortDescriptors: [SortDescriptor("place")])
    /// request.resultType = .dictionary
    /// request.propertiesToFetch = ["place"]
    /// request.returnsDistinctResults = true
    /// let places = try context.fetchRows(request).compactMap { $0["place"]?.stringValue }
    /// ```
    public var returnsDistinctResults = false
    /// Whether a context's `fetch(_:)` includes its unsaved changes (Core Data's
    /// `includesPendingChanges`): inserted objects that match, changed ones judged by their
    /// new values, deleted ones left out (always), then sorted, offset and limited. Off by
    /// default, unlike Core Data: a fetch reads what is saved. With unsaved changes of the
    /// entity, the predicate must be one ``StorePredicate/evaluate(_:)`` supports and the sort
    /// keys attribute names (otherwise the fetch throws).
    ///
    /// ```swift
    /// var request = FetchRequest(entityName: "Tag", sortDescriptors: [SortDescriptor("name")])
    /// request.includesPendingChanges = true
    /// let tags = try context.fetch(request)   // with the tag inserted a moment ago
    /// ```
    public var includesPendingChanges = false
    /// Relationships (dotted key paths allowed) whose objects a context fetch loads
    /// in one query each, instead of one fault at a time.
    public var relationshipKeyPathsForPrefetching: [String] = []

    /// A request for `entityName`'s rows.
    public init(entityName: String, predicate: StorePredicate? = nil, sortDescriptors: [SortDescriptor] = []) {
        self.entityName = entityName
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
    }
}
