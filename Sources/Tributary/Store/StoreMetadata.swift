import Foundation

/// The `_tributary_metadata` table: format version, store ID, cached model and its hash.
enum StoreMetadata {
    static let table = "_tributary_metadata"

    /// Reads the store's identity and model, creating or migrating it as allowed; the third
    /// value lists what a migration did (`added Post.views`), empty when none ran. With
    /// `explicit`, the migration may rename, remove and convert (``ModelMigration``).
    static func load(on db: Connection, given model: ManagedObjectModel?, place: String, canWrite: Bool, explicit: Bool = false) throws -> (UUID, ManagedObjectModel, [String]) {
        guard try exists(on: db) else {
            guard let model, try isEmpty(on: db) else { throw try notAStore(on: db, place: place) }
            guard canWrite else {
                throw TributaryError(.readOnly, "cannot create a store read-only", location: place, hint: "open it without the read-only option")
            }
            let identifier = UUID()
            try create(on: db, model: model, identifier: identifier)
            return (identifier, model, [])
        }
        let (identifier, cached) = try readStored(on: db, place: place)
        guard let given = model, given != cached else { return (identifier, cached, []) }
        let migration = try plan(from: cached, to: given, place: place, explicit: explicit)
        // The same model with its properties in another order: nothing to migrate.
        guard migration.model != cached else { return (identifier, cached, []) }
        guard canWrite else {
            throw TributaryError(.incompatibleModel, "the model differs from the store's and the store is open read-only", location: place, hint: "open it read-write to migrate, or without a model to use its own")
        }
        try apply(migration, on: db, storeID: identifier)
        return (identifier, migration.model, migration.changes)
    }

    /// Whether the database has Tributary's metadata table.
    private static func exists(on db: Connection) throws -> Bool {
        try db.hasTable(table)
    }

    /// Whether the database is a store or can be made one (it has no table yet): another
    /// is refused once its metadata is read, and its journal mode is left as it is.
    static func canBeStore(on db: Connection) throws -> Bool {
        try exists(on: db) || isEmpty(on: db)
    }

    private static func isEmpty(on db: Connection) throws -> Bool {
        try db.scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table'")?.integerValue ?? 0 == 0
    }

    /// Why a database without the metadata table is not a store (and cannot be made one here).
    private static func notAStore(on db: Connection, place: String) throws -> TributaryError {
        guard try isEmpty(on: db) else {
            return TributaryError(.notAStore, "a SQLite database, but not a Tributary store (it has no \(table) table)", location: place,
                                  hint: "make it a store in place with: tributary adopt \(place)")
        }
        return TributaryError(.notAStore, "an empty database, not a Tributary store", location: place, hint: "create it with: tributary init STORE --model MODEL.yml")
    }

    /// The store's identity and cached model, checking its format.
    static func readStored(on db: Connection, place: String) throws -> (UUID, ManagedObjectModel) {
        guard try exists(on: db) else { throw try notAStore(on: db, place: place) }
        var values: [String: String] = [:]
        let statement = try db.cachedStatement("SELECT key, value FROM \(table)")
        while try statement.step() { values[statement.string(at: 0)] = statement.string(at: 1) }
        guard let formatText = values["format"], let format = Int(formatText),
              let idText = values["storeID"], let identifier = UUID(uuidString: idText),
              let modelText = values["model"]
        else {
            throw TributaryError(.notAStore, "the store's metadata is incomplete", location: place, hint: "the file may be damaged; restore it from a copy or replay its stream")
        }
        if format > PersistentStore.formatVersion {
            throw TributaryError(.newerFormat, "the store was written in format \(format), newer than this Tributary's \(PersistentStore.formatVersion)", location: place,
                                 hint: "upgrade Tributary to open it")
        }
        do {
            return (identifier, try ManagedObjectModel.fromJSON(Data(modelText.utf8)))
        } catch let error as TributaryError where error.code == .invalidModel {
            throw TributaryError(.notAStore, "the model cached in the store is damaged (\(error.message))", location: place,
                                 hint: "another program changed _tributary_metadata; restore the store from a copy or replay its stream")
        }
    }

    /// The migration from the cached model to `given`; an adopted database's tables are never changed.
    static func plan(from cached: ManagedObjectModel, to given: ManagedObjectModel, place: String, explicit: Bool) throws -> ModelMigration {
        if cached.entities.contains(where: { $0.tableKey != nil }) {
            guard !explicit else {
                throw TributaryError(.incompatibleModel, "an adopted database: Tributary never changes its tables", location: place,
                                     hint: "change its tables with your own tools, then run tributary adopt \(place) again")
            }
            throw TributaryError(.incompatibleModel, "an adopted database is opened with its own model; Tributary does not change its tables", location: place,
                                 hint: "open it without a model; after changing its tables, run tributary adopt again")
        }
        return try ModelMigration(from: cached, to: given, explicit: explicit)
    }

    /// The model cached in the store, nil when the database has none (or it does not decode:
    /// ``load(on:given:place:canWrite:)`` reports that).
    static func cachedModel(on db: Connection) throws -> ManagedObjectModel? {
        guard try db.hasTable(table),
              let text = try db.scalar("SELECT value FROM \(table) WHERE key = 'model'")?.stringValue else { return nil }
        return try? ManagedObjectModel.fromJSON(Data(text.utf8))
    }

    private static func create(on db: Connection, model: ManagedObjectModel, identifier: UUID) throws {
        if let entity = model.entities.first(where: \.isWithoutRowid) {
            throw TributaryError(.invalidModel, "'\(entity.name)' is a WITHOUT ROWID table: Tributary does not make one, nor make a store with it", location: "entity \(entity.name)",
                                 hint: "make the table in a database of your own (the source's CREATE TABLE), run tributary adopt on it, and replay into that")
        }
        try db.execute("CREATE TABLE \(table) (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID")
        let schema = StoreSchema(model: model)
        for entity in model.entities {
            for sql in schema.createStatements(for: entity) { try db.execute(sql) }
        }
        for entity in model.entities {
            for sql in schema.joinTableStatements(for: entity) { try db.execute(sql) }
        }
        try DerivedAttributeTriggers.install(on: db, schema: schema)
        try write(on: db, [
            "format": String(PersistentStore.formatVersion),
            "storeID": identifier.uuidString.lowercased(),
            "model": String(decoding: model.canonicalJSON(), as: UTF8.self),
            "modelHash": model.versionHash,
            "created": ISO8601.string(from: Date()),
        ])
    }

    static func write(on db: Connection, _ values: [String: String]) throws {
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            try db.execute("INSERT INTO \(table) (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", [.string(key), .string(value)])
        }
    }
}
