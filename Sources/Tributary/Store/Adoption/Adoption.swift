import Foundation

/// One adoption of a database, or its undoing, inside the caller's write transaction.
struct Adoption {
    let db: Connection
    let path: String
    /// The journal mode before adoption switched it to WAL (kept to undo it).
    let journalMode: String

    private static let metadata = StoreMetadata.table

    /// Adopts the database, or adopts it again (new tables in, gone tables out).
    func run(_ requested: DatabaseAdoption) throws -> AdoptionReport {
        try refuseUTF16()
        let existing = try adoptedStore()
        // Rows the capture logged under the model in force are folded with it first: the new
        // one may number a table's columns otherwise, or leave the table out. A store without
        // history (a replica a replay made) captured nothing and has no schema history yet.
        let captured = try existing != nil && HistorySchema.storedFormat(on: db, place: path) != nil
        if captured, try StoreMetadata.hasUnfoldedWrites(on: db) { throw ForeignWritesPending() }
        // Adopting again without options keeps the ones the database was adopted with.
        let options = requested == DatabaseAdoption() ? existing?.options ?? requested : requested
        let inferred = try SchemaInference(options: options).read(on: db, place: path)
        let model = try ManagedObjectModel(entities: inferred.entities)
        let identifier = existing?.identifier ?? UUID()
        if existing == nil {
            try db.execute("CREATE TABLE \(Self.metadata) (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID")
            try StoreMetadata.write(on: db, [
                "format": String(PersistentStore.formatVersion), "storeID": identifier.uuidString.lowercased(),
                "created": ISO8601.string(from: Date()), "adoptedJournalMode": journalMode,
            ])
        }
        // Creates history, or brings an adopted store's from an older format.
        try HistorySchema.prepare(on: db, enable: true, place: path)
        if let existing, captured {
            // A change another program made is recorded once: when first detected, or now
            // (with what it renamed said as renamed, read before the triggers are made again).
            let current = try SchemaHistory.model(at: .max, on: db) ?? existing.model
            let renames = try ForeignRenames.read(on: db, schema: StoreSchema(model: existing.model))
            try SchemaHistory.record(from: current, to: model, changes: renames.changes(from: current, to: model), on: db)
        } else {
            try SchemaHistory.begin(with: model, on: db)
        }
        try StoreMetadata.write(on: db, [
            "model": String(decoding: model.canonicalJSON(), as: UTF8.self), "modelHash": model.versionHash,
            "adoptedOptions": String(decoding: try JSONEncoder().encode(options), as: UTF8.self),
            CaptureCheck.reportedKey: "[]",
        ])
        let schema = StoreSchema(model: model)
        try CaptureLog.create(on: db, schema: schema)
        _ = try CaptureInstaller.install(on: db, schema: schema)
        try KeyMap.dropUnused(keeping: KeyMap.all(in: model), on: db)
        let before = Set(existing?.model.entities.map(\.name) ?? [])
        return AdoptionReport(storeID: identifier.uuidString.lowercased(), wasAdopted: existing != nil, tables: inferred.tables,
                              newTables: inferred.tables.map(\.name).filter { !before.contains($0) }, skipped: inferred.skipped)
    }

    /// The journal mode the database had before it was adopted (nil when not recorded);
    /// refuses a database that is not an adopted store.
    func journalModeToRestore() throws -> String? {
        guard try adoptedStore() != nil else {
            throw TributaryError(.notAStore, "not an adopted database: it has no Tributary tables", location: path, hint: "nothing to undo")
        }
        return try db.scalar("SELECT value FROM \(Self.metadata) WHERE key = 'adoptedJournalMode'")?.stringValue?.lowercased()
    }

    /// Drops every `_tributary_*` object; gives their names.
    func undo() throws -> [String] {
        _ = try journalModeToRestore()
        var removed: [String] = []
        for type in ["trigger", "view", "table"] {
            let statement = try db.makeStatement("SELECT name FROM sqlite_master WHERE type = ? AND name LIKE '\\_tributary\\_%' ESCAPE '\\' ORDER BY name")
            try statement.bind([.string(type)])
            var names: [String] = []
            while try statement.step() { names.append(statement.string(at: 0)) }
            for name in names { try db.execute("DROP \(type.uppercased()) \(quote(name))") }
            removed += names
        }
        return removed
    }

    /// The adopted store in the database, or nil when it has none; a store Tributary
    /// created is refused (its tables are its own).
    private func adoptedStore() throws -> (identifier: UUID, model: ManagedObjectModel, options: DatabaseAdoption)? {
        let metadataColumns = try db.scalar("SELECT group_concat(name, ',') FROM pragma_table_info('\(Self.metadata)')")?.stringValue
        guard metadataColumns != nil else {
            try refuseLookAlikes()
            return nil
        }
        guard metadataColumns == "key,value" else { throw lookAlikes([Self.metadata]) }
        let (identifier, model, _) = try StoreMetadata.load(on: db, given: nil, place: path, canWrite: false)
        guard model.entities.allSatisfy({ $0.tableKey != nil }) else {
            throw TributaryError(.invalidInput, "a store made by Tributary, not an adopted database", location: path,
                                 hint: "its tables are Tributary's own; change them with a model and tributary init, or delete the file")
        }
        return (identifier, model, try Self.storedOptions(on: db))
    }

    /// Refuses a database whose text is UTF-16: history, fetches and the reading of the
    /// write-ahead log's pages take text as UTF-8 bytes (a tombstone recorded UTF-16 bytes
    /// as if they were UTF-8), and an encoding is set for good when a database is made.
    private func refuseUTF16() throws {
        let statement = try db.makeStatement("PRAGMA encoding")
        guard try statement.step() else { return }
        let encoding = statement.string(at: 0)
        guard encoding != "UTF-8" else { return }
        throw TributaryError(.invalidInput, "the database keeps its text as \(encoding); Tributary reads UTF-8 databases only", location: path,
                             hint: "copy it into a UTF-8 database (sqlite3 \(path) .dump | sqlite3 copy.db), then adopt the copy")
    }

    /// Refuses a database that is not a store but has tables or triggers named as Tributary
    /// names its own: adopting it would take them for Tributary's.
    private func refuseLookAlikes() throws {
        let statement = try db.makeStatement(#"SELECT name FROM sqlite_master WHERE name LIKE '\_tributary\_%' ESCAPE '\' ORDER BY name"#)
        var names: [String] = []
        while try statement.step() { names.append(statement.string(at: 0)) }
        if !names.isEmpty { throw lookAlikes(names) }
    }

    private func lookAlikes(_ names: [String]) -> TributaryError {
        TributaryError(.invalidInput, "the database has \(names.joined(separator: ", ")), named as Tributary names its own objects, but is not a store Tributary made or adopted", location: path,
                       hint: "rename \(names.count == 1 ? "it" : "them") (ALTER TABLE … RENAME TO …), then adopt the database")
    }

    /// The include and exclude patterns the database was adopted with.
    static func storedOptions(on db: Connection) throws -> DatabaseAdoption {
        let text = try db.scalar("SELECT value FROM \(metadata) WHERE key = 'adoptedOptions'")?.stringValue ?? "{}"
        return (try? JSONDecoder().decode(DatabaseAdoption.self, from: Data(text.utf8))) ?? DatabaseAdoption()
    }
}
