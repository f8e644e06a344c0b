import Foundation
import Synchronization

/// A query generation: a stable snapshot of the store a context reads from
/// until it saves, merges, resets or is moved (Core Data's `NSQueryGenerationToken`).
///
/// ```swift
/// try context.setQueryGenerationFrom(.current)        // pin at the next read
/// let token = context.queryGenerationToken             // share it:
/// try otherContext.setQueryGenerationFrom(token)       // both see the same snapshot
/// ```
///
/// A generation holds a pooled reader in an open read transaction, so it needs
/// a file store in WAL mode; in-memory stores read unpinned. While pinned, it
/// holds back WAL checkpoints: ``PersistentStoreCoordinator/oldestQueryGenerationAge``
/// tells how long the oldest has been held.
public struct QueryGenerationToken: Sendable, Equatable {
    enum Kind: Sendable {
        case current
        case generation(QueryGeneration)
    }

    let kind: Kind

    /// Pins a context to the store's newest generation at its next read.
    public static let current = QueryGenerationToken(kind: .current)

    public static func == (lhs: QueryGenerationToken, rhs: QueryGenerationToken) -> Bool {
        switch (lhs.kind, rhs.kind) {
        case (.current, .current): return true
        case (.generation(let a), .generation(let b)): return a === b
        default: return false
        }
    }
}

/// One pinned snapshot: a reader connection with a read transaction open,
/// shared by the contexts pinned to it, released when the last lets go.
// @unchecked Sendable: the connection is used only under `lock`.
final class QueryGeneration: @unchecked Sendable {
    private let lock = NSLock()
    private let connection: Connection
    let database: StoreDatabase
    private let registry: QueryGenerationRegistry
    /// When the snapshot was taken.
    let pinnedAt = Date()

    /// Takes a reader and starts its snapshot now.
    init(store: PersistentStore) throws {
        database = store.database
        registry = store.generations
        let connection = try store.database.readers.checkout()
        do {
            try connection.execute("BEGIN DEFERRED")
            // A read transaction's snapshot starts at its first read.
            _ = try connection.scalar("SELECT count(*) FROM sqlite_master")
        } catch {
            if connection.isInTransaction { try? connection.execute("ROLLBACK") }
            store.database.readers.checkin(connection)
            throw error
        }
        self.connection = connection
        registry.add(self)
    }

    deinit {
        if connection.isInTransaction { try? connection.execute("ROLLBACK") }
        database.readers.checkin(connection)
        registry.remove(self)
    }

    /// Runs `body` on the snapshot.
    func read<T>(_ body: (Connection) throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        do {
            return try body(connection)
        } catch let error as SQLiteError {
            throw StoreDatabase.translate(error, path: database.path, timeout: database.busyTimeout)
        }
    }
}

/// The generations pinned on one store, for reporting how old the oldest is.
final class QueryGenerationRegistry: Sendable {
    private let pinned = Locked<[ObjectIdentifier: Date]>([:])

    func add(_ generation: QueryGeneration) {
        pinned.withLock { $0[ObjectIdentifier(generation)] = generation.pinnedAt }
    }

    func remove(_ generation: QueryGeneration) {
        pinned.withLock { $0[ObjectIdentifier(generation)] = nil }
    }

    var count: Int { pinned.withLock { $0.count } }
    var oldest: Date? { pinned.withLock { $0.values.min() } }
}

/// Where a context reads from.
enum GenerationState {
    /// The store's newest data at each read.
    case unpinned
    /// Pin the newest generation at the next read.
    case pendingCurrent
    /// A pinned snapshot.
    case pinned(QueryGeneration)

    /// A pinned context moves to the newest generation (lazily) after saving or merging.
    mutating func advanceAfterSave() {
        if case .pinned = self { self = .pendingCurrent }
    }
}

extension PersistentStoreCoordinator {
    /// How long the oldest pinned query generation has been held, or nil when
    /// none is: a generation holds back WAL checkpoints, so a large age means
    /// a growing WAL file.
    ///
    /// ```swift
    /// if let age = coordinator.oldestQueryGenerationAge, age > 60 { print("a context has been pinned for a minute") }
    /// ```
    public var oldestQueryGenerationAge: TimeInterval? {
        guard let store = persistentStores.first, let oldest = store.generations.oldest else { return nil }
        return Date().timeIntervalSince(oldest)
    }

    /// The number of query generations pinned now (each holds one reader).
    public var pinnedQueryGenerationCount: Int {
        persistentStores.first?.generations.count ?? 0
    }
}

extension ManagedObjectContext {
    /// The generation the context reads: nil when unpinned, ``QueryGenerationToken/current``
    /// when it will pin at its next read, or the pinned generation's token. A child reports its parent's.
    public var queryGenerationToken: QueryGenerationToken? {
        if let parent { return parent.queryGenerationToken }
        return withLock {
            switch generation {
            case .unpinned: return nil
            case .pendingCurrent: return .current
            case .pinned(let pinned): return QueryGenerationToken(kind: .generation(pinned))
            }
        }
    }

    /// Pins the context to a generation (``QueryGenerationToken/current``, or another
    /// context's token), or unpins it with nil. Registered objects keep their values
    /// until refreshed or fetched again, as in Core Data.
    ///
    /// ```swift
    /// try viewContext.setQueryGenerationFrom(.current)
    /// ```
    public func setQueryGenerationFrom(_ token: QueryGenerationToken?) throws {
        guard parent == nil else {
            throw TributaryError(.invalidInput, "a child context reads through its parent's query generation", hint: "set the generation on the parent context")
        }
        try withLock {
            switch token?.kind {
            case nil: generation = .unpinned
            case .current: generation = .pendingCurrent
            case .generation(let pinned):
                guard pinned.database === (try requireStore().database) else {
                    throw TributaryError(.invalidInput, "the query generation belongs to another store", hint: "pin to a token of a context over the same store")
                }
                generation = .pinned(pinned)
            }
        }
    }

    /// Runs `body` on a reader: the pinned generation's, the parent's, or a pooled one.
    func withReader<T>(_ body: (Connection) throws -> T) throws -> T {
        if let parent { return try parent.withLock { try parent.withReader(body) } }
        let store = try requireStore()
        switch generation {
        case .unpinned:
            return try store.database.read(body)
        case .pendingCurrent:
            if store.database.isInMemory { return try store.database.read(body) }
            let pinned = try QueryGeneration(store: store)
            generation = .pinned(pinned)
            return try pinned.read(body)
        case .pinned(let pinned):
            return try pinned.read(body)
        }
    }
}
