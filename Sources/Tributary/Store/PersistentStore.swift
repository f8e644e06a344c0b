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
    public let isHistoryTracked: Bool
    /// What opening the store migrated, one item a change (`added Post.views`,
    /// `added entity Comment`); empty when the model was the store's own.
    public let migrationChanges: [String]

    private init(identifier: UUID, description: PersistentStoreDescription, model: ManagedObjectModel, database: StoreDatabase, isHistoryTracked: Bool, migrationChanges: [String] = []) {
        self.identifier = identifier
        self.migrationChanges = migrationChanges
        self.description = description
        self.model = model
        let schema = StoreSchema(model: model)
        self.schema = schema
        self.contextSchema = ContextSchema(schema: schema)
        self.database = database
        self.isHistoryTracked = isHistoryTracked
    }

    /// Opens (and, given a model, creates or migrates) the store described. The description
    /// is locked from now on (unlocked again if the store cannot be opened, so it can be fixed).
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
        let path: String
        let inMemory: Bool
        switch description.kind {
        case .file(let filePath):
            path = filePath
            inMemory = false
            // An empty file is not a store yet: opening it would make it a 4 KB database (WAL)
            // before the missing metadata is noticed. Only a model turns it into one.
            if model == nil, let size = (try? FileManager.default.attributesOfItem(atPath: filePath))?[.size] as? Int, size == 0 {
                throw TributaryError(.notAStore, "an empty file, not a store", location: filePath, hint: "create the store with: tributary init \(filePath) --model MODEL.yml")
            }
            if !FileManager.default.fileExists(atPath: filePath) {
                if description.isReadOnly || model == nil {
                    throw TributaryError(.fileNotFound, "no store at this path", location: filePath, hint: "create it first with: tributary init \(filePath) --model MODEL.yml")
                }
                let directory = (filePath as NSString).deletingLastPathComponent
                if !directory.isEmpty, !FileManager.default.fileExists(atPath: directory) {
                    throw TributaryError(.fileNotFound, "the store's directory does not exist", location: filePath, hint: "create \(directory) first")
                }
            }
        case .privateInMemory:
            path = "file:/tributary-private-\(UUID().uuidString)?vfs=memdb"
            inMemory = true
        case .namedInMemory(let name):
            path = "file:/tributary-named-\(name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? name)?vfs=memdb"
            inMemory = true
        }
        let database = try StoreDatabase(path: path, isInMemory: inMemory, readOnly: description.isReadOnly,
                                         poolSize: description.connectionPoolMaxSize, busyTimeout: description.busyTimeout, sqlDebug: description.sqlDebug,
                                         postsRemoteChanges: description.remoteChangeNotificationPost)
        let place = inMemory ? description.url.path : path
        do {
            let (identifier, effectiveModel, changes, tracked) = description.isReadOnly
                ? try database.read { db in
                    let (id, model, changes) = try StoreMetadata.load(on: db, given: model, place: place, canWrite: false)
                    return (id, model, changes, try HistorySchema.isPresent(on: db, place: place))
                }
                : try database.write { db in
                    let (id, model, changes) = try StoreMetadata.load(on: db, given: model, place: place, canWrite: true)
                    return (id, model, changes, try HistorySchema.prepare(on: db, enable: description.persistentHistoryTracking, place: place))
                }
            let store = PersistentStore(identifier: identifier, description: description, model: effectiveModel, database: database, isHistoryTracked: tracked, migrationChanges: changes)
            if tracked && !description.isReadOnly { try database.enableHistory(schema: store.schema) }
            return store
        } catch let error as TributaryError where error.location == nil {
            throw error.located(place)
        }
    }

    /// Closes idle connections; the store is unusable afterwards.
    func close() { database.close() }

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
