import Foundation

/// Where a store lives and how to open it (Core Data's `NSPersistentStoreDescription`).
///
/// - a file URL: a SQLite file in WAL mode;
/// - `/dev/null`: a private in-memory store;
/// - `/dev/null/NAME`: a named in-memory store that every coordinator in the
///   process opening the same name shares (for tests, as in the reference talk).
///
/// A reference type, as in Core Data, so a container's descriptions are set in place:
///
/// ```swift
/// let container = PersistentContainer(name: "Earthquakes", managedObjectModel: model)
/// container.persistentStoreDescriptions.first?.persistentHistoryTracking = true
/// container.persistentStoreDescriptions.first?.remoteChangeNotificationPost = true
/// try await container.loadPersistentStores()
///
/// let description = PersistentStoreDescription(url: URL(fileURLWithPath: "blog.sqlite"))
/// description.connectionPoolMaxSize = 8
/// let shared = PersistentStoreDescription.inMemory(named: "tests")
/// ```
///
/// Once a store is opened with it (``PersistentStoreCoordinator/addPersistentStore(with:)``,
/// ``PersistentContainer/loadPersistentStores()``), a description is locked: changing it
/// then is a programmer error that stops the program, rather than a change silently
/// ignored. Use ``copy()`` for a description to change.
// @unchecked Sendable: every setting lives in `state`, behind its lock.
public final class PersistentStoreDescription: @unchecked Sendable, Equatable, CustomStringConvertible {
    /// The settings, and whether a store was opened with them.
    struct Settings: Sendable, Equatable {
        var url: URL
        var isReadOnly = false
        var connectionPoolMaxSize = 4
        var busyTimeout: TimeInterval = 5
        var persistentHistoryTracking = false
        var historyHashChain = true
        var historyObjectIndex = true
        var remoteChangeNotificationPost = false
        var allowsExplicitMigration = false
        var sqlDebug = SQLDebugLog.fromEnvironment()
        var runsDatabaseTriggers = true
    }

    private let state: Locked<(settings: Settings, isLocked: Bool)>

    /// A description of the store at `url`.
    public init(url: URL) {
        state = Locked((Settings(url: url), false))
    }

    private init(settings: Settings) {
        state = Locked((settings, false))
    }

    /// An unlocked description with the same settings.
    ///
    /// ```swift
    /// let readOnly = store.description.copy()
    /// readOnly.isReadOnly = true
    /// ```
    public func copy() -> PersistentStoreDescription {
        PersistentStoreDescription(settings: settings)
    }

    /// The settings now.
    var settings: Settings { state.withLock { $0.settings } }

    /// Whether a store was opened with the description (it can no longer change).
    public var isLocked: Bool { state.withLock { $0.isLocked } }

    /// Locks the description (a store is opened with it); returns whether it was locked already.
    @discardableResult
    func lock() -> Bool {
        state.withLock { state in
            defer { state.isLocked = true }
            return state.isLocked
        }
    }

    /// Unlocks it again, after a store failed to open with it.
    func unlock() { state.withLock { $0.isLocked = false } }

    private func set(_ name: String, _ body: (inout Settings) -> Void) {
        state.withLock { state in
            precondition(!state.isLocked, "Tributary: PersistentStoreDescription.\(name) changed after a store was opened with it; set it before loadPersistentStores(), or change a copy()")
            body(&state.settings)
        }
    }

    /// The store's location.
    public var url: URL {
        get { settings.url }
        set { set("url") { $0.url = newValue } }
    }
    /// Open without writing: no writer connection, no migration.
    public var isReadOnly: Bool {
        get { settings.isReadOnly }
        set { set("isReadOnly") { $0.isReadOnly = newValue } }
    }
    /// The most reader connections (Core Data's `connectionPoolMaxSize`); 1 means serial reads.
    public var connectionPoolMaxSize: Int {
        get { settings.connectionPoolMaxSize }
        set { set("connectionPoolMaxSize") { $0.connectionPoolMaxSize = newValue } }
    }
    /// How long a write waits for another connection's lock, and a read for a free reader.
    public var busyTimeout: TimeInterval {
        get { settings.busyTimeout }
        set { set("busyTimeout") { $0.busyTimeout = newValue } }
    }
    /// Record history for every write (Core Data's `NSPersistentHistoryTrackingKey`).
    public var persistentHistoryTracking: Bool {
        get { settings.persistentHistoryTracking }
        set { set("persistentHistoryTracking") { $0.persistentHistoryTracking = newValue } }
    }
    /// Chain each history transaction to the one before by a SHA-256 hash, so that an edit
    /// of the history tables shows (``PersistentStoreCoordinator/verifyHistoryChain()``).
    /// On by default; it applies when a store's history is created or upgraded.
    public var historyHashChain: Bool {
        get { settings.historyHashChain }
        set { set("historyHashChain") { $0.historyHashChain = newValue } }
    }
    /// Keep an index from each object to the history transactions that touched it, so that
    /// an object's timeline (``HistoryFilter/objectIDs``, `tributary history --object`) reads
    /// only its own transactions. On by default; it applies when a store's history is
    /// created or upgraded. Off saves its write cost (one small row per transaction and
    /// block of 64 keys it touched) where timelines are not asked for.
    public var historyObjectIndex: Bool {
        get { settings.historyObjectIndex }
        set { set("historyObjectIndex") { $0.historyObjectIndex = newValue } }
    }
    /// Post remote change notifications after each commit
    /// (Core Data's `NSPersistentStoreRemoteChangeNotificationPostOptionKey`).
    public var remoteChangeNotificationPost: Bool {
        get { settings.remoteChangeNotificationPost }
        set { set("remoteChangeNotificationPost") { $0.remoteChangeNotificationPost = newValue } }
    }
    /// Let opening the store with a model that differs from the store's beyond additions
    /// migrate it (Core Data's lightweight migration, with renaming identifiers): renamed
    /// entities, attributes and relationships (``AttributeDescription/renamingIdentifier``,
    /// `renamedFrom:` in a model file) keep their rows and values; removed ones are dropped;
    /// types SQLite can convert are converted, when every stored value converts. Off by
    /// default: opening then migrates additive changes only and refuses the rest, naming it.
    ///
    /// The migration runs in one SQLite transaction, so it applies whole or not at all; the
    /// store's ``PersistentStore/migrationChanges`` lists what it did. Run it while no other
    /// program has the store open: their model would no longer match the tables. History
    /// written before keeps the old names. ``PersistentStoreCoordinator/migrateStore(at:to:dryRun:busyTimeout:)``
    /// and `tributary migrate` use it, and can show the plan without writing.
    ///
    /// ```swift
    /// let description = PersistentStoreDescription(url: url)
    /// description.allowsExplicitMigration = true
    /// let store = try PersistentStoreCoordinator(managedObjectModel: v2).addPersistentStore(with: description)
    /// print(store.migrationChanges)   // ["renamed Post.body to Post.content", "removed Post.legacy"]
    /// ```
    public var allowsExplicitMigration: Bool {
        get { settings.allowsExplicitMigration }
        set { set("allowsExplicitMigration") { $0.allowsExplicitMigration = newValue } }
    }
    /// Whether Tributary's writes to an adopted database run the database's own triggers
    /// (those another program made: keeping a full-text index, a timestamp or an audit table),
    /// as every other program's writes do. On by default: while the database has such a
    /// trigger, each write transaction runs with the stored triggers on and the pre-update
    /// hook paused, and folds what the capture triggers logged into its own history before it
    /// commits (one transaction, under its own author, at the capture triggers' cost). Off,
    /// Tributary writes the rows alone, at no trigger cost: a replay writes its target so,
    /// since the stream carries what the source's triggers wrote to captured tables already
    /// (run again, they would write it twice, under other keys); what they keep outside
    /// capture in a replica (a full-text index) is rebuilt there.
    ///
    /// ```swift
    /// description.runsDatabaseTriggers = false
    /// ```
    public var runsDatabaseTriggers: Bool {
        get { settings.runsDatabaseTriggers }
        set { set("runsDatabaseTriggers") { $0.runsDatabaseTriggers = newValue } }
    }
    /// Logging of every SQL statement with its duration; by default as the
    /// environment variable `TRIBUTARY_SQL_DEBUG` says (`1` statements, `2` with values).
    ///
    /// ```swift
    /// description.sqlDebug = SQLDebugLog(level: .statements)
    /// ```
    public var sqlDebug: SQLDebugLog {
        get { settings.sqlDebug }
        set { set("sqlDebug") { $0.sqlDebug = newValue } }
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

    /// Equal settings (whether locked or not).
    public static func == (lhs: PersistentStoreDescription, rhs: PersistentStoreDescription) -> Bool {
        lhs === rhs || lhs.settings == rhs.settings
    }

    /// The URL and the options that differ from the defaults.
    public var description: String {
        let s = settings
        var parts = [s.url.path]
        if s.isReadOnly { parts.append("read-only") }
        if s.persistentHistoryTracking { parts.append("history") }
        if !s.runsDatabaseTriggers { parts.append("database triggers off") }
        if s.remoteChangeNotificationPost { parts.append("remote change notifications") }
        if !s.historyHashChain { parts.append("no hash chain") }
        if !s.historyObjectIndex { parts.append("no object index") }
        if s.allowsExplicitMigration { parts.append("explicit migration") }
        return "PersistentStoreDescription(" + parts.joined(separator: ", ") + ")"
    }
}
