import Foundation

/// The store's models through its history (history format 5): each model change is a
/// history transaction of its own (``SchemaChange``), written in the SQLite transaction
/// that changes the model, and `_tributary_history_schema` keeps the model in force from
/// each such token on.
///
/// - The transaction's process is "schema change" (ID -4); its context name is the
///   change's ``SchemaChange/summary``, so the hash chain covers what changed and the
///   model's version; its entities are the entities that changed; it has no changes.
/// - The table's row at a token holds the versions, the changes and the whole model as
///   canonical JSON. The first row (the *baseline*) is the model when schema history began:
///   token 0 for a store made with it, the newest token when an older store was upgraded.
///   Rows outlive pruning, so the model at any token stays known.
enum SchemaHistory {
    static let table = "_tributary_history_schema"
    static let source: (processID: Int32, processName: String) = (-4, "schema change")

    /// Creates the table (empty; ``begin(with:on:)`` writes its baseline).
    static func create(on db: Connection) throws {
        try db.execute("""
            CREATE TABLE IF NOT EXISTS \(table) (
                token INTEGER PRIMARY KEY,
                fromVersion TEXT,
                toVersion TEXT NOT NULL,
                changes TEXT NOT NULL,
                detected INTEGER NOT NULL,
                model TEXT NOT NULL)
            """)
    }

    /// Whether the store at `db` keeps schema history.
    static func exists(on db: Connection) throws -> Bool {
        try db.hasTable(table)
    }

    /// Writes the baseline, `model` at the newest token, when the table has no row yet.
    static func begin(with model: ManagedObjectModel, on db: Connection) throws {
        guard try db.scalar("SELECT count(*) FROM \(table)")?.integerValue == 0 else { return }
        let token = try db.scalar(HistorySchema.newestTokenSQL)?.integerValue ?? 0
        try insertRow(token: token, SchemaChange(fromVersion: nil, toVersion: model.versionHash, changes: [], model: model, isDetected: false), on: db)
    }

    /// At a store's opening, after its migration (if any) ran: writes the baseline, then
    /// the migration's schema transaction when `changes` is not empty.
    static func note(from old: ManagedObjectModel, to new: ManagedObjectModel, changes: [String], on db: Connection) throws {
        try begin(with: old, on: db)
        if !changes.isEmpty { try record(from: old, to: new, changes: changes, on: db) }
    }

    /// Records that the model went from `old` to `new` (when they differ): the schema
    /// transaction and its row, in the caller's write transaction. `changes` says what
    /// changed (a migration's own list), else it is worked out from the two models.
    /// Returns the transaction's token, nil when nothing changed.
    @discardableResult
    static func record(from old: ManagedObjectModel, to new: ManagedObjectModel, changes: [String]? = nil, detected: Bool = false, on db: Connection) throws -> Int64? {
        guard old != new else { return nil }
        try begin(with: old, on: db)
        let difference = ModelDifference(from: old, to: new)
        let change = SchemaChange(fromVersion: old.versionHash, toVersion: new.versionHash, changes: changes ?? difference.changes, model: new, isDetected: detected)
        let historySource = HistorySource(author: nil, contextName: change.summary, processID: source.processID, processName: source.processName)
        let payload = try HistoryPayload.finish(body: [], count: 0, names: NameTable())
        var row = HistoryRecorder.HistoryRow(payload: payload, count: 0, entities: difference.entities, source: historySource)
        if try ObjectTimelineIndex.exists(on: db) { row.objects = ObjectTimelineIndex.Entries() }
        let token = try HistoryRecorder.insertTransaction(row, sourceID: try HistoryRecorder.sourceID(historySource, on: db), on: db)
        try insertRow(token: token, change, on: db)
        return token
    }

    private static func insertRow(token: Int64, _ change: SchemaChange, on db: Connection) throws {
        let changes = String(decoding: try JSONEncoder().encode(change.changes), as: UTF8.self)
        try db.execute("INSERT INTO \(table) (token, fromVersion, toVersion, changes, detected, model) VALUES (?, ?, ?, ?, ?, ?)", [
            .integer(token), change.fromVersion.map { .string($0) } ?? .null, .string(change.toVersion), .string(changes),
            .integer(change.isDetected ? 1 : 0), .string(String(decoding: change.model.canonicalJSON(), as: UTF8.self)),
        ])
    }

    /// The schema change recorded at `token`, nil when the transaction there is not one.
    static func change(at token: Int64, on db: Connection) throws -> SchemaChange? {
        try changes(where: "token = ?", [.integer(token)], on: db).first?.change
    }

    /// The model in force just after `token`: the newest row at or before it (the baseline
    /// for tokens before it); nil without schema history.
    static func model(at token: Int64, on db: Connection) throws -> ManagedObjectModel? {
        guard try exists(on: db) else { return nil }
        let rows = try changes(where: "token <= ? ORDER BY token DESC LIMIT 1", [.integer(token)], on: db)
        if let model = rows.first?.change.model { return model }
        return try changes(where: "1 ORDER BY token LIMIT 1", [], on: db).first?.change.model
    }

    /// The schema changes (baseline excluded) after `after` through `through`, in order.
    static func changes(after: Int64, through: Int64, on db: Connection) throws -> [(token: Int64, change: SchemaChange)] {
        guard try exists(on: db) else { return [] }
        return try changes(where: "token > ? AND token <= ? AND fromVersion IS NOT NULL ORDER BY token", [.integer(after), .integer(through)], on: db)
    }

    private static func changes(where clause: String, _ arguments: [AttributeValue], on db: Connection) throws -> [(token: Int64, change: SchemaChange)] {
        let statement = try db.makeStatement("SELECT token, fromVersion, toVersion, changes, detected, model FROM \(table) WHERE \(clause)")
        try statement.bind(arguments)
        var result: [(Int64, SchemaChange)] = []
        while try statement.step() {
            let token = statement.int64(at: 0)
            let model: ManagedObjectModel
            let changes: [String]
            do {
                model = try ManagedObjectModel.fromJSON(Data(statement.string(at: 5).utf8))
                changes = try JSONDecoder().decode([String].self, from: Data(statement.string(at: 3).utf8))
            } catch {
                throw TributaryError(.io, "the model recorded at token \(token) is damaged (\(error))", location: table,
                                     hint: "another program changed \(table); restore the store from a copy or replay its stream")
            }
            result.append((token, SchemaChange(fromVersion: statement.isNull(at: 1) ? nil : statement.string(at: 1), toVersion: statement.string(at: 2),
                                               changes: changes, model: model, isDetected: statement.int64(at: 4) != 0)))
        }
        return result
    }
}
