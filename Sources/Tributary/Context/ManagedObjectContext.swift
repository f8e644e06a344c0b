import Foundation
import Synchronization

/// A scratch pad of objects over a store (Core Data's `NSManagedObjectContext`):
/// fetch and fault objects, change them, then save all changes in one SQLite
/// transaction, with the context's ``name`` and ``transactionAuthor`` in history.
///
/// ```swift
/// let context = container.newBackgroundContext()
/// context.transactionAuthor = "importer"
/// try await context.perform {
///     let tag = try context.insertNewObject(forEntityName: "Tag")
///     tag["name"] = "swift"
///     try context.save()
/// }
/// ```
///
/// Every method takes the context's lock, so a context and its objects may be
/// used from any task; ``perform(_:)`` runs a block on the context's own queue
/// (the main actor's for ``ConcurrencyType/mainQueue``) and ``performAndWait(_:)``
/// runs one at once, each as one step no other task interleaves with.
// @unchecked Sendable: all mutable state is guarded by `lock`.
public final class ManagedObjectContext: @unchecked Sendable {
    /// Where a context runs its ``perform(_:)`` blocks (Core Data's concurrency types).
    public enum ConcurrencyType: Sendable {
        /// On the main queue (the main actor), for the interface's context.
        case mainQueue
        /// On a private serial queue of the context's own.
        case privateQueue
    }

    /// The concurrency type the context was made with.
    public let concurrencyType: ConcurrencyType
    /// The coordinator the context reads and writes through (its parent's, for a child).
    public let persistentStoreCoordinator: PersistentStoreCoordinator
    /// The parent context of a nested context, whose save goes into the parent instead of the store.
    public let parent: ManagedObjectContext?

    let lock = NSRecursiveLock()
    let queue: DispatchQueue

    // Settings (guarded by `lock`).
    var nameValue: String?
    var authorValue: String?
    var reasonValue: String?
    var mergePolicyValue = MergePolicy.error
    /// Atomic, not under `lock`: other contexts read it while holding their own lock.
    let autoMergeValue = Atomic<Bool>(false)
    var deleteInaccessibleValue = true
    /// Whether this context only makes the objects a batch insert's `managedObjectHandler`
    /// fills in: their relationships are set in their row alone (see `setBatchInsertRelationship`).
    var makesBatchInsertObjects = false
    /// Whether values of another class than their attribute's, which no conversion keeps, are
    /// set as given (``BatchInsertRequest/writesValuesAsGiven``): a restore puts back what the
    /// store held, 5 in an untyped column included. Set before the context is used.
    var writesValuesAsGiven = false

    // State (guarded by `lock`).
    var storeValue: PersistentStore?
    /// Registered objects, per entity index, by primary key (negative for temporary IDs).
    var registry: [[Int64: ManagedObject]] = []
    /// Objects with changes, in the order they first changed (each flagged `isInDirtyList`).
    var dirtyObjects: [ManagedObject] = []
    var generation = GenerationState.unpinned
    /// The class of each entity's objects, by entity index, looked up once.
    var objectTypes: [ManagedObject.Type?] = []
    var children: [WeakContext] = []
    var didSaveContinuations: [UUID: AsyncStream<ContextDidSave>.Continuation] = [:]
    /// Told of every save and merge into this context, in this context's lock (fetched results controllers).
    var changeObservers: [UUID: @Sendable (ContextDidSave) -> Void] = [:]
    /// Merges other coordinators' and processes' saves while ``automaticallyMergesChangesFromParent`` is on.
    var remoteMerging: Task<Void, Never>?

    /// A top-level context over `coordinator`'s store.
    ///
    /// ```swift
    /// let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
    /// ```
    public init(concurrencyType: ConcurrencyType, coordinator: PersistentStoreCoordinator) {
        self.concurrencyType = concurrencyType
        self.persistentStoreCoordinator = coordinator
        self.parent = nil
        self.queue = concurrencyType == .mainQueue ? .main : DispatchQueue(label: "tributary.context")
        queue.setSpecificIfPrivate(for: self)
        coordinator.contexts.add(self)
    }

    /// A nested context whose saves go into `parent`, which it reads through
    /// (seeing the parent's unsaved changes and its query generation).
    ///
    /// ```swift
    /// let editor = ManagedObjectContext(concurrencyType: .privateQueue, parent: container.viewContext)
    /// ```
    public init(concurrencyType: ConcurrencyType, parent: ManagedObjectContext) {
        self.concurrencyType = concurrencyType
        self.persistentStoreCoordinator = parent.persistentStoreCoordinator
        self.parent = parent
        self.queue = concurrencyType == .mainQueue ? .main : DispatchQueue(label: "tributary.context.child")
        queue.setSpecificIfPrivate(for: self)
        parent.withLock { parent.children.append(WeakContext(self)) }
    }

    deinit {
        for continuation in didSaveContinuations.values { continuation.finish() }
        remoteMerging?.cancel()
    }

    // MARK: Settings

    /// The context's name, recorded with each save's history (`contextName`).
    public var name: String? {
        get { withLock { nameValue } }
        set { withLock { nameValue = newValue } }
    }

    /// Who saves (Core Data's `transactionAuthor`), recorded with each save's history.
    public var transactionAuthor: String? {
        get { withLock { authorValue } }
        set { withLock { authorValue = newValue } }
    }

    /// Why the context saves, recorded with each save's history (``TransactionMetadata/reason``);
    /// it stays until changed, as ``transactionAuthor`` does.
    ///
    /// ```swift
    /// context.transactionReason = "ticket 4211: merge duplicate accounts"
    /// try context.save()
    /// ```
    public var transactionReason: String? {
        get { withLock { reasonValue } }
        set { withLock { reasonValue = newValue } }
    }

    /// How a save resolves conflicts with newer store values and unique constraints (``MergePolicy/error`` by default).
    public var mergePolicy: MergePolicy {
        get { withLock { mergePolicyValue } }
        set { withLock { mergePolicyValue = newValue } }
    }

    /// Whether the context merges, on its own queue, the saves of its parent (for a
    /// child), or (for a top-level context) those of the other contexts of its
    /// coordinator and, when the store posts remote change notifications
    /// (``PersistentStoreDescription/remoteChangeNotificationPost``), through a
    /// ``HistoryWatcher`` those of other coordinators and processes (with history
    /// tracking; without it, a remote change refreshes every object).
    public var automaticallyMergesChangesFromParent: Bool {
        get { autoMergeValue.load(ordering: .acquiring) }
        set {
            autoMergeValue.store(newValue, ordering: .releasing)
            if parent == nil {
                withLock {
                    if !newValue { stopRemoteMerging() } else if let storeValue { startRemoteMerging(storeValue) }
                }
            }
        }
    }

    /// When a fault's row is gone: true (the default) marks the object deleted
    /// with nil values; false makes reading it throw ``TributaryError/Code/objectNotFound``.
    public var shouldDeleteInaccessibleFaults: Bool {
        get { withLock { deleteInaccessibleValue } }
        set { withLock { deleteInaccessibleValue = newValue } }
    }

    // MARK: Running work

    /// Runs `body` on the context's queue as one step and returns its result.
    ///
    /// ```swift
    /// let count = try await context.perform { try context.count(for: FetchRequest(entityName: "Post")) }
    /// ```
    public func perform<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        if concurrencyType == .mainQueue {
            return try await MainActor.run { try self.withLock(body) }
        }
        return try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try self.withLock(body) })
            }
        }
    }

    /// Runs `body` at once, as one step no other task interleaves with: on the calling
    /// thread for a private-queue context, on the main queue for a main-queue context
    /// (waiting for it unless already there), as Core Data does.
    ///
    /// ```swift
    /// try context.performAndWait { try context.save() }
    /// ```
    public func performAndWait<T>(_ body: () throws -> T) rethrows -> T {
        if concurrencyType == .mainQueue && !isOnQueue {
            return try withoutActuallyEscaping(body) { body in
                // nonisolated(unsafe): the caller waits for the main queue to run `body`, so it runs on one thread at a time.
                nonisolated(unsafe) let body = body
                nonisolated(unsafe) var result: Result<T, any Error>?
                DispatchQueue.main.sync { result = Result { try self.withLock(body) } }
                switch result {
                case .success(let value)?: return value
                case .failure(let error)?: throw error
                case nil: preconditionFailure("Tributary: the main queue did not run the block")
                }
            }
        }
        return try withLock(body)
    }

    @inline(__always)
    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    // MARK: The store

    /// The coordinator's store (resolved on first use, so a context may be made before stores load).
    func requireStore() throws -> PersistentStore {
        if let storeValue { return storeValue }
        let store = try persistentStoreCoordinator.requireStore()
        storeValue = store
        registry = Array(repeating: [:], count: store.contextSchema.entities.count)
        objectTypes = Array(repeating: nil, count: store.contextSchema.entities.count)
        if parent == nil && automaticallyMergesChangesFromParent { startRemoteMerging(store) }
        return store
    }

    func layout(_ entityName: String) throws -> ContextEntity {
        try requireStore().contextSchema.entity(entityName)
    }

    // MARK: Objects

    /// Makes and registers a new object of `entityName`, with the model's default values.
    ///
    /// ```swift
    /// let post = try context.insertNewObject(forEntityName: "Post")
    /// ```
    public func insertNewObject(forEntityName entityName: String) throws -> ManagedObject {
        try withLock {
            let layout = try layout(entityName)
            let id = ObjectID(storeID: try requireStore().identifier, entityName: layout.name, primaryKey: ManagedObjectContext.nextTemporaryKey())
            let object = makeObject(layout, id: id)
            object.values = layout.defaults
            object.snapshot = []
            object.isFaultState = false
            object.isInsertedState = true
            register(object)
            markDirty(object)
            return object
        }
    }

    /// Makes and registers a new object of a ``EntityNamed`` subclass.
    ///
    /// ```swift
    /// let post = try context.insert(Post.self)
    /// post.title = "Hello"
    /// ```
    public func insert<T: EntityNamed>(_ type: T.Type) throws -> T {
        try useSubclass(type)
        let object = try insertNewObject(forEntityName: T.entityName)
        return try cast(object, to: type)
    }

    /// The object with `objectID`: the registered one, or a new fault (no I/O).
    /// Reading a value of a fault whose row is gone follows ``shouldDeleteInaccessibleFaults``.
    ///
    /// ```swift
    /// let post = try context.object(with: id)
    /// print(post["title"])      // fires the fault
    /// ```
    public func object(with objectID: ObjectID) throws -> ManagedObject {
        try withLock {
            let store = try requireStore()
            guard objectID.storeID == store.identifier else {
                throw TributaryError(.invalidInput, "object ID \(objectID) belongs to another store", hint: "use object IDs of store \(store.identifier.uuidString.lowercased())")
            }
            return try registeredOrFault(objectID)
        }
    }

    /// The object with `objectID`, its values loaded; throws when its row does not exist.
    public func existingObject(with objectID: ObjectID) throws -> ManagedObject {
        try withLock {
            let object = try self.object(with: objectID)
            let wasDeleted = object.isDeletedState
            if object.isFaultState {
                let keep = deleteInaccessibleValue
                deleteInaccessibleValue = false
                defer { deleteInaccessibleValue = keep }
                try object.fireIfNeeded()
            }
            if object.isDeletedState && !wasDeleted || (object.isDeletedState && !object.isInsertedState && object.snapshot.isEmpty) {
                throw Self.notFound(objectID)
            }
            return object
        }
    }

    /// The registered object with `objectID`, or nil.
    public func registeredObject(for objectID: ObjectID) -> ManagedObject? {
        withLock {
            guard let layout = storeValue?.contextSchema.byName[objectID.entityName], layout.index < registry.count else { return nil }
            return registry[layout.index][objectID.primaryKey]
        }
    }

    /// Every registered object.
    public var registeredObjects: Set<ManagedObject> {
        withLock { Set(registry.flatMap(\.values)) }
    }

    /// Objects inserted and not saved.
    public var insertedObjects: Set<ManagedObject> {
        withLock { Set(dirtyObjects.filter { $0.isInsertedState && !$0.isDeletedState }) }
    }

    /// Saved objects with unsaved changes.
    public var updatedObjects: Set<ManagedObject> {
        withLock { Set(dirtyObjects.filter { !$0.isInsertedState && !$0.isDeletedState && $0.hasLocalChanges }) }
    }

    /// Saved objects deleted and not saved.
    public var deletedObjects: Set<ManagedObject> {
        withLock { Set(dirtyObjects.filter { $0.isDeletedState && !$0.isInsertedState }) }
    }

    /// Whether saving would write anything.
    public var hasChanges: Bool {
        withLock { dirtyObjects.contains { $0.isInsertedState != $0.isDeletedState || ($0.isDeletedState == false && $0.hasLocalChanges) } }
    }

    /// Deletes `object` when the context saves, applying its entity's delete
    /// rules to related objects now: nullify removes it from their inverse
    /// relationships, cascade deletes them too; deny is checked when saving.
    ///
    /// ```swift
    /// context.delete(post)      // its attachments (cascade) are deleted too
    /// try context.save()
    /// ```
    public func delete(_ object: ManagedObject) {
        withLock {
            guard object.context === self else { return }
            do { try propagateDelete(object) } catch { markDeleted(object) }
        }
    }

    // MARK: Fetching

    /// The objects matching `request` (its predicate, sort, limit and offset run in
    /// the store; objects deleted in this context are left out; registered objects
    /// keep their in-memory values). Prefetches `relationshipKeyPathsForPrefetching`.
    ///
    /// ```swift
    /// var request = FetchRequest(entityName: "Post", sortDescriptors: [SortDescriptor("title")])
    /// request.relationshipKeyPathsForPrefetching = ["tags"]
    /// let posts = try context.fetch(request)
    /// ```
    public func fetch(_ request: FetchRequest) throws -> [ManagedObject] {
        try withLock {
            let store = try requireStore()
            let layout = try store.contextSchema.entity(request.entityName)
            var objects: [ManagedObject] = []
            switch request.resultType {
            case .managedObject: break
            case .count:
                throw TributaryError(.invalidInput, "a context fetch returns objects", location: request.entityName, hint: "use count(for:) for a count")
            case .dictionary:
                throw TributaryError(.invalidInput, "fetch(_:) returns objects, and the request asks for dictionaries", location: request.entityName,
                                     hint: "use context.fetchRows(_:) for dictionary results, or set resultType to .managedObject")
            case .objectID:
                throw TributaryError(.invalidInput, "fetch(_:) returns objects, and the request asks for object IDs", location: request.entityName,
                                     hint: "use context.fetchObjectIDs(_:) for object IDs, or set resultType to .managedObject")
            }
            let pending = try pendingObjects(for: request, layout: layout)
            var idRequest = request
            idRequest.resultType = .objectID
            if !pending.isEmpty {
                // Limit and offset apply after the unsaved changes are merged in.
                idRequest.fetchLimit = 0
                idRequest.fetchOffset = 0
            }
            let query = try FetchQuery(idRequest, schema: store.schema)
            let storeID = store.identifier
            if parent != nil {
                let ids = try withReader { db -> [ObjectID] in
                    let statement = try db.makeStatement(query.sql)
                    try statement.bind(query.arguments)
                    var ids: [ObjectID] = []
                    while try statement.step() { ids.append(ObjectID(storeID: storeID, entityName: layout.name, primaryKey: statement.int64(at: 0))) }
                    return ids
                }
                for id in ids {
                    let object = try registeredOrFault(id)
                    if !object.isDeletedState { objects.append(object) }
                }
            } else {
                // The ID query's SELECT with the version and every slot added.
                let idColumn = "SELECT t0.\(layout.table.key)"
                precondition(query.sql.hasPrefix(idColumn), "Tributary: unexpected fetch SQL")
                let selectSQL = "SELECT t0.\(layout.table.key), \(layout.table.version("t0"))" + layout.slotNames.map { ", t0.\(quote($0))" }.joined() + query.sql.dropFirst(idColumn.count)
                try withReader { db in
                    let statement = try db.makeStatement(selectSQL)
                    try statement.bind(query.arguments)
                    while try statement.step() {
                        let key = statement.int64(at: 0)
                        let object: ManagedObject
                        if let registered = registry[layout.index][key] {
                            object = registered
                            if object.isFaultState {
                                fill(object, version: statement.int64(at: 1), values: layout.readSlots(statement, from: 2, storeID: storeID))
                            }
                        } else {
                            object = makeObject(layout, id: ObjectID(storeID: storeID, entityName: layout.name, primaryKey: key))
                            fill(object, version: statement.int64(at: 1), values: layout.readSlots(statement, from: 2, storeID: storeID))
                            register(object)
                        }
                        if !object.isDeletedState { objects.append(object) }
                    }
                }
            }
            if !pending.isEmpty { objects = try applying(pending, to: objects, request: request, layout: layout) }
            if !request.relationshipKeyPathsForPrefetching.isEmpty {
                try prefetch(request.relationshipKeyPathsForPrefetching, of: objects, layout: layout)
            }
            return objects
        }
    }

    /// The objects of a ``EntityNamed`` subclass matching a predicate, sorted.
    ///
    /// ```swift
    /// let posts = try context.fetch(Post.self, predicate: try StorePredicate(format: "title BEGINSWITH 'A'"))
    /// ```
    public func fetch<T: EntityNamed>(_ type: T.Type, predicate: StorePredicate? = nil, sortDescriptors: [SortDescriptor] = []) throws -> [T] {
        try useSubclass(type)
        return try fetch(FetchRequest(entityName: T.entityName, predicate: predicate, sortDescriptors: sortDescriptors)).map { try cast($0, to: type) }
    }

    /// The number of saved objects matching `request`, read through the context's query generation.
    public func count(for request: FetchRequest) throws -> Int {
        try withLock {
            let store = try requireStore()
            var countRequest = request
            countRequest.resultType = .count
            countRequest.fetchLimit = 0
            countRequest.fetchOffset = 0
            let query = try FetchQuery(countRequest, schema: store.schema)
            var total = try withReader { db in Int(try db.scalar(query.sql, query.arguments)?.integerValue ?? 0) }
            total = max(0, total - request.fetchOffset)
            return request.fetchLimit > 0 ? min(total, request.fetchLimit) : total
        }
    }

    // MARK: Internals

    static let temporaryKeys = Atomic<Int64>(0)

    /// A new negative key for a temporary object ID, unique in the process.
    static func nextTemporaryKey() -> Int64 {
        -temporaryKeys.add(1, ordering: .relaxed).newValue
    }

    static func notFound(_ id: ObjectID) -> TributaryError {
        TributaryError(.objectNotFound, "\(id.entityName) \(id) does not exist in the store", location: id.uriRepresentation,
                       hint: "it was deleted; fetch again, or set shouldDeleteInaccessibleFaults to treat such faults as deleted")
    }

    func makeObject(_ layout: ContextEntity, id: ObjectID) -> ManagedObject {
        let type: ManagedObject.Type
        if let known = objectTypes[layout.index] {
            type = known
        } else {
            type = persistentStoreCoordinator.objectClasses.type(for: layout.name)
            objectTypes[layout.index] = type
        }
        return type.init(ManagedObjectSeed(layout: layout, id: id, context: self))
    }

    func register(_ object: ManagedObject) {
        registry[object.layout.index][object.id.primaryKey] = object
    }

    func unregister(_ object: ManagedObject) {
        if registry[object.layout.index][object.id.primaryKey] === object {
            registry[object.layout.index][object.id.primaryKey] = nil
        }
    }

    @inline(__always)
    func markDirty(_ object: ManagedObject) {
        if !object.isInDirtyList {
            object.isInDirtyList = true
            dirtyObjects.append(object)
        }
    }

    func removeFromDirty(_ object: ManagedObject) {
        guard object.isInDirtyList else { return }
        object.isInDirtyList = false
        dirtyObjects.removeAll { $0 === object }
    }

    func registeredOrFault(_ id: ObjectID) throws -> ManagedObject {
        let layout = try self.layout(id.entityName)
        if let object = registry[layout.index][id.primaryKey] { return object }
        let object = makeObject(layout, id: id)
        register(object)
        return object
    }

    /// Loads a fault's values from the parent or the store.
    func fill(_ object: ManagedObject, version: Int64, values: [AttributeValue]) {
        object.version = version
        object.snapshot = values
        object.values = values
        object.changedSlots = 0
        object.isFaultState = false
    }

    /// Fires `object`'s fault: reads its row (or its parent's object).
    func fireFault(_ object: ManagedObject) throws {
        if let parent {
            if let (version, values) = try parent.withLock({ try parent.currentValues(of: object.id) }) {
                fill(object, version: version, values: values)
                return
            }
        } else {
            let layout = object.layout
            let key = object.id.primaryKey
            let storeID = try requireStore().identifier
            let row = try withReader { db -> (Int64, [AttributeValue])? in
                let statement = try db.cachedStatement(layout.selectByKeySQL)
                try statement.bind(.integer(key), at: 1)
                defer { statement.rewind() }
                guard try statement.step() else { return nil }
                return (statement.int64(at: 0), layout.readSlots(statement, from: 1, storeID: storeID))
            }
            if let (version, values) = row {
                fill(object, version: version, values: values)
                return
            }
        }
        guard deleteInaccessibleValue else { throw Self.notFound(object.id) }
        fill(object, version: 0, values: Array(repeating: .null, count: object.layout.slotNames.count))
        object.isDeletedState = true
    }

    /// The current values of the object with `id` in this context (for a child's fault), or nil when it is gone.
    func currentValues(of id: ObjectID) throws -> (Int64, [AttributeValue])? {
        let object = try registeredOrFault(id)
        let keep = deleteInaccessibleValue
        deleteInaccessibleValue = true
        defer { deleteInaccessibleValue = keep }
        try object.fireIfNeeded()
        if object.isDeletedState { return nil }
        return (object.version, object.values)
    }

    /// The primary keys of link `link`'s targets of a saved object (from the parent or the store).
    func loadLinkTargets(of object: ManagedObject, link: Int) throws -> Set<ObjectID> {
        let layout = object.layout
        let relationship = layout.links[link]
        if let parent {
            return try parent.withLock {
                let parentObject = try parent.registeredOrFault(object.id)
                try parentObject.fireIfNeeded()
                if parentObject.isDeletedState { return [] }
                try parentObject.loadLink(link)
                return parentObject.linkStates[link]?.current ?? []
            }
        }
        let storeID = try requireStore().identifier
        let key = object.id.primaryKey
        return try withReader { db in
            let statement = try db.cachedStatement(layout.linkTargetsSQL(link))
            try statement.bind(.integer(key), at: 1)
            defer { statement.rewind() }
            var targets: Set<ObjectID> = []
            while try statement.step() {
                targets.insert(ObjectID(storeID: storeID, entityName: relationship.destinationEntity, primaryKey: statement.int64(at: 0)))
            }
            return targets
        }
    }

    /// Registers `type` for its entity and makes this context use it from now on.
    func useSubclass<T: EntityNamed>(_ type: T.Type) throws {
        persistentStoreCoordinator.objectClasses.register(type)
        try withLock {
            let layout = try layout(T.entityName)
            if objectTypes[layout.index] == nil || objectTypes[layout.index] == ManagedObject.self {
                objectTypes[layout.index] = persistentStoreCoordinator.objectClasses.type(for: layout.name)
            }
        }
    }

    func cast<T: ManagedObject>(_ object: ManagedObject, to type: T.Type) throws -> T {
        guard let typed = object as? T else {
            throw TributaryError(.invalidInput, "\(object.layout.name) objects in this context were made as \(Swift.type(of: object)), not \(T.self)",
                                 location: object.layout.name, hint: "call coordinator.registerSubclass(\(T.self).self) before the context first uses \(object.layout.name) objects")
        }
        return typed
    }
}

/// A weak reference to a context, for parents and coordinators.
struct WeakContext: @unchecked Sendable {
    // @unchecked Sendable: the reference is only read under the holder's lock.
    weak var context: ManagedObjectContext?
    init(_ context: ManagedObjectContext) { self.context = context }
}
