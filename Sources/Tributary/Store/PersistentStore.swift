import Foundation

/// An open store: its identity, its model and its connections.
///
/// Stores are opened by a coordinator (``PersistentStoreCoordinator/addPersistentStore(with:)``).
///
/// ```swift
/// let store = try coordinator.addPersistentStore(with: description)
/// print(store.identifier, store.model.entities.map(\.name))
/// ```
public final class PersistentStore: Sendable {
    /// The store's format; a store written by a newer format is refused.
    public static let formatVersion = 1

    /// The store's UUID, fixed when it is created; part of every object ID.
    public let identifier: UUID
    /// How it was opened.
    public let description: PersistentStoreDescription
    /// The model in force: the one given, or the one cached in the store.
    public let model: ManagedObjectModel
    /// The store's URL.
    public var url: URL { description.url }

    let schema: StoreSchema
    let database: StoreDatabase
    /// What contexts know of each entity.
    let contextSchema: ContextSchema
    /// The query generations pinned on this store's readers.
    let generations = QueryGenerationRegistry()
    /// Whether writes record history: set by the option, and kept once a store has history.
    public var isHistoryTracked: Bool { historyFormat != nil }
    /// The history's format (``HistorySchema/formatVersion``, older only when opened
    /// read-only) and whether it keeps the object timeline index; nil without history.
    let history: HistorySchema.Layout?
    /// The history's format, nil without history.
    var historyFormat: Int? { history?.format }
    /// What opening the store migrated, one item a change (`added Post.views`,
    /// `added entity Comment`; with ``PersistentStoreDescription/allowsExplicitMigration``
    /// also `renamed Post.body to Post.content`, `removed Post.legacy`,
    /// `changed Post.views from integer to double`); empty when the model was the store's own.
    public let migrationChanges: [String]

    /// Records other programs' writes in history (read-write stores with history).
    let capture: ForeignCapture?
    /// Records history on the writer (a ``WriteParticipant`` of writable stores that track history).
    let recorder: HistoryRecorder
    /// Tells listeners of the same store about each commit (the `remoteChangeNotificationPost` option).
    let poster: RemoteChangePoster?
    /// Whether the database has triggers of its own, which Tributary's writes then run.
    let databaseTriggers = DatabaseTriggers()

    private init(identifier: UUID, description: PersistentStoreDescription, model: ManagedObjectModel, database: StoreDatabase, history: HistorySchema.Layout?,
                 parts: WriteParts, migrationChanges: [String] = []) {
        self.capture = parts.capture
        self.recorder = parts.recorder
        self.poster = parts.poster
        self.identifier = identifier
        self.migrationChanges = migrationChanges
        self.description = description
        self.model = model
        let schema = StoreSchema(model: model)
        self.schema = schema
        self.contextSchema = ContextSchema(schema: schema)
        self.database = database
        self.history = history
    }

    /// Opens (and, given a model, creates or migrates) the store described. The description
    /// is locked from now on (unlocked again if the store cannot be opened, so it can be fixed).
    /// Creating is all or nothing: when a new store cannot be made (a model SQLite refuses, a
    /// full disk), the file is removed again, or emptied again when it was an empty file.
    static func open(_ description: PersistentStoreDescription, model: ManagedObjectModel?) throws -> PersistentStore {
        let wasLocked = description.lock()
        do {
            return try openLocked(description, model: model)
        } catch {
            if !wasLocked { description.unlock() }
            throw error
        }
    }

    private static func openLocked(_ description: PersistentStoreDescription, model: ManagedObjectModel?) throws -> PersistentStore {
        try ConnectionOptions.checkBusyTimeout(description.busyTimeout, place: description.url.path)
        let path: String
        let inMemory: Bool
        var creating: FileState?
        switch description.kind {
        case .file(let filePath):
            path = filePath
            inMemory = false
            creating = try checkFile(filePath, description: description, model: model)
        case .privateInMemory:
            path = "file:/tributary-private-\(UUID().uuidString)?vfs=memdb"
            inMemory = true
        case .namedInMemory(let name):
            path = "file:/tributary-named-\(name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? name)?vfs=memdb"
            inMemory = true
        }
        do {
            return try loadFoldingFirst(description, model: model, path: path, inMemory: inMemory)
        } catch {
            if let creating { undoCreation(at: path, state: creating) }
            throw error
        }
    }

    /// ``load(_:model:path:inMemory:)``; when an explicit migration must wait for other
    /// programs' writes to be folded into history (``ForeignWritesPending``), opens the store
    /// with its own model first (which folds them) and tries once more.
    private static func loadFoldingFirst(_ description: PersistentStoreDescription, model: ManagedObjectModel?, path: String, inMemory: Bool) throws -> PersistentStore {
        do {
            return try load(description, model: model, path: path, inMemory: inMemory)
        } catch is ForeignWritesPending {
            try load(description, model: nil, path: path, inMemory: inMemory).close()
        }
        do {
            return try load(description, model: model, path: path, inMemory: inMemory)
        } catch is ForeignWritesPending {
            throw TributaryError(.storeLocked, "other programs kept writing to the store while it was being migrated", location: description.url.path,
                                 hint: "stop the programs that write to it (the sqlite3 shell, scripts), then migrate again")
        }
    }

    /// What was at a store's path before a store is created there.
    enum FileState { case missing, empty }

    /// Refuses a path that cannot hold the store described; tells whether a store will be
    /// created there (the path missing or an empty file, with a model given), else nil.
    private static func checkFile(_ filePath: String, description: PersistentStoreDescription, model: ManagedObjectModel?) throws -> FileState? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: filePath, isDirectory: &isDirectory) else {
            if description.isReadOnly || model == nil {
                throw TributaryError(.fileNotFound, "no store at this path", location: filePath, hint: "create it first with: tributary init \(filePath) --model MODEL.yml")
            }
            let directory = (filePath as NSString).deletingLastPathComponent
            if !directory.isEmpty, !FileManager.default.fileExists(atPath: directory) {
                throw TributaryError(.fileNotFound, "the store's directory does not exist", location: filePath, hint: "create \(directory) first")
            }
            return .missing
        }
        if isDirectory.boolValue, let problem = StoreDatabase.fileProblem(filePath) { throw problem }
        let size = (try? FileManager.default.attributesOfItem(atPath: filePath)[.size] as? Int) ?? nil
        guard size == 0 else { return nil }
        if description.isReadOnly || model == nil {
            throw TributaryError(.notAStore, "an empty file, not a store", location: filePath, hint: "create the store with: tributary init \(filePath) --model MODEL.yml")
        }
        return .empty
    }

    /// Removes what a failed creation left at `path` (the database and its WAL, shared-memory
    /// and notification files), or empties the file again when it was empty before.
    private static func undoCreation(at path: String, state: FileState) {
        for suffix in ["-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let sidecar = RemoteChangePoster.sidecarPath(of: path)
        if (try? FileManager.default.attributesOfItem(atPath: sidecar)[.size] as? Int) == 0 { try? FileManager.default.removeItem(atPath: sidecar) }
        switch state {
        case .missing: try? FileManager.default.removeItem(atPath: path)
        case .empty: truncate(path, 0)
        }
    }

    /// Opens the connections and loads (or creates) the metadata; every connection is
    /// released when this returns or throws.
    private static func load(_ description: PersistentStoreDescription, model: ManagedObjectModel?, path: String, inMemory: Bool) throws -> PersistentStore {
        let database = try StoreDatabase(path: path, isInMemory: inMemory, readOnly: description.isReadOnly,
                                         poolSize: description.connectionPoolMaxSize, busyTimeout: description.busyTimeout, sqlDebug: description.sqlDebug,
                                         usesWAL: StoreMetadata.canBeStore)
        let place = inMemory ? description.url.path : path
        var parts = WriteParts()
        do {
            if description.remoteChangeNotificationPost && !description.isReadOnly {
                let poster = RemoteChangePoster(databasePath: path, isInMemory: inMemory)
                parts.poster = poster
                try database.addParticipant(poster)
            }
            let (identifier, effectiveModel, changes, history) = description.isReadOnly
                ? try database.read { db in
                    let (id, model, changes) = try StoreMetadata.load(on: db, given: model, place: place, canWrite: false)
                    return (id, model, changes, try HistorySchema.Layout.read(on: db, place: place))
                }
                : try database.write { db in
                    let before = try StoreMetadata.cachedModel(on: db)
                    let (id, model, changes) = try StoreMetadata.load(on: db, given: model, place: place, canWrite: true,
                                                                      explicit: description.allowsExplicitMigration)
                    if Connection.canDisableMainTriggersOnly { try DerivedAttributeTriggers.install(on: db, schema: StoreSchema(model: model), temporary: true) }
                    let layout = try HistorySchema.prepare(on: db, enable: description.persistentHistoryTracking,
                                                           chain: description.historyHashChain, objectIndex: description.historyObjectIndex, place: place)
                    if layout != nil { try SchemaHistory.note(from: before ?? model, to: model, changes: changes, on: db) }
                    return (id, model, changes, layout)
                }
            // WITHOUT ROWID tables are read through TEMP views numbering their rows (the fold too).
            try database.useTemporarySchema(KeyMap.all(in: effectiveModel).flatMap(\.temporaryStatements))
            let tracked = history != nil
            let captures = tracked && !description.isReadOnly && !inMemory && Connection.canDisableMainTriggersOnly
            parts.capture = captures ? try ForeignCapture.enable(on: database, schema: StoreSchema(model: effectiveModel)) : nil
            let store = PersistentStore(identifier: identifier, description: description, model: effectiveModel, database: database, history: history,
                                        parts: parts, migrationChanges: changes)
            if tracked && !description.isReadOnly {
                // After the capture: other programs' writes are folded when a transaction
                // begins, before its own history is written at the commit.
                try database.addParticipant(parts.recorder) { db in try parts.recorder.install(on: db, schema: store.schema) }
            }
            return store
        } catch let error as TributaryError where error.location == nil {
            parts.poster?.close()
            database.close()
            throw error.located(place)
        } catch {
            parts.poster?.close()
            database.close()
            throw error
        }
    }

    /// What takes part in the store's write transactions (``WriteParticipant``).
    private struct WriteParts {
        var capture: ForeignCapture?
        let recorder = HistoryRecorder()
        var poster: RemoteChangePoster?
    }

    /// Folds into history what other programs wrote since the last fold, so that a reader
    /// of history sees every committed write; cheap when they wrote nothing.
    func foldForeignWrites() throws {
        guard let capture, try database.withWriter({ try capture.hasPending(on: $0) }) else { return }
        try database.write { _ in }
    }

    /// Closes idle connections; the store is unusable afterwards.
    func close() {
        database.close()
        poster?.close()
    }

    // MARK: Object IDs

    /// The object ID of a row of `entity`.
    public func objectID(entity: String, primaryKey: Int64) -> ObjectID {
        ObjectID(storeID: identifier, entityName: entity, primaryKey: primaryKey)
    }

    /// Parses an object ID URI of this store; an error names what is wrong.
    public func objectID(uri: String) throws -> ObjectID {
        guard let id = ObjectID(uriRepresentation: uri) else {
            throw TributaryError(.invalidInput, "'\(uri)' is not an object ID", hint: "object IDs look like tributary://<store-uuid>/<Entity>/p<key>")
        }
        guard id.storeID == identifier else {
            throw TributaryError(.invalidInput, "object ID \(uri) belongs to another store", hint: "use object IDs of store \(identifier.uuidString.lowercased())")
        }
        _ = try schema.table(id.entityName)
        return id
    }
}
