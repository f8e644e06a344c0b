/// A fetch request for objects of one ``EntityNamed`` class (Core Data's
/// `NSFetchRequest<Quake>` as `Quake.fetchRequest()` makes it): every setting of
/// ``FetchRequest`` (predicate, sort, limit, offset, batch size, prefetching…) through
/// its properties, and a context fetch that returns `[Result]`.
///
/// ```swift
/// var request = Quake.fetchRequest()
/// request.predicate = try StorePredicate(format: "magnitude >= %@", 4.5)
/// request.sortDescriptors = [SortDescriptor("time", ascending: false)]
/// request.fetchLimit = 20
/// request.relationshipKeyPathsForPrefetching = ["region"]
/// let quakes: [Quake] = try context.fetch(request)
/// ```
@dynamicMemberLookup
public struct TypedFetchRequest<Result: EntityNamed>: Sendable, Equatable {
    /// The untyped request, for the coordinator's fetches.
    public var request: FetchRequest

    /// A request for every object of `Result`'s entity.
    public init(predicate: StorePredicate? = nil, sortDescriptors: [SortDescriptor] = []) {
        request = FetchRequest(entityName: Result.entityName, predicate: predicate, sortDescriptors: sortDescriptors)
    }

    /// Reads and writes the settings of ``request``.
    public subscript<Value>(dynamicMember keyPath: WritableKeyPath<FetchRequest, Value>) -> Value {
        get { request[keyPath: keyPath] }
        set { request[keyPath: keyPath] = newValue }
    }
}

extension EntityNamed {
    /// A request for every object of this class's entity (Core Data's generated `fetchRequest()`).
    ///
    /// ```swift
    /// let request = Quake.fetchRequest()
    /// ```
    public static func fetchRequest() -> TypedFetchRequest<Self> {
        TypedFetchRequest()
    }
}

extension ManagedObjectContext {
    /// The objects matching a typed request, as its class (see `fetch(_:)` with a `FetchRequest`).
    ///
    /// ```swift
    /// var request = Quake.fetchRequest()
    /// request.fetchLimit = 10
    /// let quakes = try context.fetch(request)   // [Quake]
    /// ```
    public func fetch<T: EntityNamed>(_ request: TypedFetchRequest<T>) throws -> [T] {
        try useSubclass(T.self)
        return try fetch(request.request).map { try cast($0, to: T.self) }
    }

    /// The number of objects a typed request matches.
    public func count<T: EntityNamed>(for request: TypedFetchRequest<T>) throws -> Int {
        try count(for: request.request)
    }
}
