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

    /// Parses `key`, `key:asc` or `key:desc`, as the CLI's `--sort` takes them.
    public init(parsing text: String) throws {
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        guard let key = parts.first, !key.isEmpty else {
            throw TributaryError(.invalidInput, "empty sort key", hint: "write --sort key or --sort key:desc")
        }
        var ascending = true
        if parts.count == 2 {
            switch parts[1].lowercased() {
            case "asc", "ascending": ascending = true
            case "desc", "descending": ascending = false
            default: throw TributaryError(.invalidInput, "unknown sort direction '\(parts[1])' in '\(text)'", hint: "use asc or desc")
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
    /// relationship's `@count`, `@min.KEY` or `@max.KEY` (`"tags.@count"`); each row's key is
    /// the path as written.
    ///
    /// ```swift
    /// request.propertiesToFetch = ["title", "tags.@count", "tags.@min.name"]
    /// ```
    public var propertiesToFetch: [String]?
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
