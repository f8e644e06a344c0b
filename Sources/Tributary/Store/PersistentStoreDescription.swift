import Foundation

/// Where a store lives and how to open it (Core Data's `NSPersistentStoreDescription`).
///
/// - a file URL: a SQLite file in WAL mode;
/// - `/dev/null`: a private in-memory store;
/// - `/dev/null/NAME`: a named in-memory store that every coordinator in the
///   process opening the same name shares (for tests, as in the reference talk).
///
/// ```swift
/// var description = PersistentStoreDescription(url: URL(fileURLWithPath: "blog.sqlite"))
/// description.connectionPoolMaxSize = 8
/// description.persistentHistoryTracking = true
/// let shared = PersistentStoreDescription.inMemory(named: "tests")
/// ```
public struct PersistentStoreDescription: Sendable, Equatable {
    /// The store's location.
    public var url: URL
    /// Open without writing: no writer connection, no migration.
    public var isReadOnly = false
    /// The most reader connections (Core Data's `connectionPoolMaxSize`); 1 means serial reads.
    public var connectionPoolMaxSize = 4
    /// How long a write waits for another connection's lock, and a read for a free reader.
    public var busyTimeout: TimeInterval = 5
    /// Record history for every write (Core Data's `NSPersistentHistoryTrackingKey`).
    public var persistentHistoryTracking = false
    /// Post remote change notifications after each commit
    /// (Core Data's `NSPersistentStoreRemoteChangeNotificationPostOptionKey`).
    public var remoteChangeNotificationPost = false
    /// Logging of every SQL statement with its duration; by default as the
    /// environment variable `TRIBUTARY_SQL_DEBUG` says (`1` statements, `2` with values).
    ///
    /// ```swift
    /// description.sqlDebug = SQLDebugLog(level: .statements)
    /// ```
    public var sqlDebug = SQLDebugLog.fromEnvironment()

    /// A description of the store at `url`.
    public init(url: URL) {
        self.url = url
    }

    /// An in-memory store: private when `name` is nil, shared by name within the process otherwise.
    public static func inMemory(named name: String? = nil) -> PersistentStoreDescription {
        PersistentStoreDescription(url: URL(fileURLWithPath: name.map { "/dev/null/\($0)" } ?? "/dev/null"))
    }

    /// The kind of location.
    public enum Kind: Sendable, Equatable {
        case file(path: String)
        case privateInMemory
        case namedInMemory(name: String)
    }

    /// The kind of location the URL names.
    public var kind: Kind {
        let path = url.standardizedFileURL.path
        if path == "/dev/null" { return .privateInMemory }
        if path.hasPrefix("/dev/null/") { return .namedInMemory(name: String(path.dropFirst("/dev/null/".count))) }
        return .file(path: path)
    }
}
