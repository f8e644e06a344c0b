import CoreMetrics
import Foundation

/// Keeps the capture of other programs' writes whole. After any change of the schema
/// (another program dropping or altering a capture trigger, a migration), the write
/// transaction that notices it installs again what is missing and, when triggers of a
/// table captured before were gone or altered, records that writes may be missing: a
/// history transaction without changes whose process is "capture gap" (ID -3) and whose
/// context names the tables and the token since which (when the capture was last checked
/// whole); the metric `tributary_capture_gaps_total` counts them. Never silent.
struct CaptureCheck {
    static let gapSource: (Int32, String) = (CaptureGapEvent.processID, CaptureGapEvent.processName)
    private static let gaps = Counter(label: "tributary_capture_gaps_total")
    /// The schema version the capture was last checked at (-1: not yet).
    private var checkedVersion: Int64 = -1

    /// Whether the schema changed since the last check (read outside a transaction too).
    func isDue(on db: Connection) throws -> Bool {
        try Self.schemaVersion(on: db) != checkedVersion
    }

    /// In a write transaction: installs the capture of `schema`, records a gap for what
    /// had drifted, and returns the captured tables.
    mutating func run(on db: Connection, schema: StoreSchema) throws -> [CapturedTable] {
        let installed = try CaptureInstaller.install(on: db, schema: schema)
        if !installed.drifted.isEmpty {
            let line = "writes by other programs to \(installed.drifted.joined(separator: ", ")) since token \(try Self.since(on: db)) may be missing: "
                + "the capture triggers of \(installed.drifted.count == 1 ? "that table" : "those tables") had been dropped or altered (installed again)"
            try Self.recordGap(installed.drifted, line, on: db)
        }
        if !installed.unprobed.isEmpty {
            try Self.recordGap(installed.unprobed, "rows removed by INSERT or UPDATE OR REPLACE in \(installed.unprobed.joined(separator: ", ")) since token \(try Self.since(on: db)) "
                          + "may be missing: another program made a unique index the capture did not probe (probed from now on)", on: db)
        }
        if schema.isAdopted { try reportTablesOutsideCapture(schema, installed, on: db) }
        try db.execute("UPDATE \(CaptureLog.state) SET checkedToken = (\(HistorySchema.newestTokenSQL)) WHERE id = 1")
        checkedVersion = try Self.schemaVersion(on: db)
        return installed.tables
    }

    /// Where an adopted database's tables and its model part (another program made, dropped
    /// or altered a table since it was adopted), records each such change once as a gap:
    /// writes to a new table or column are not captured until the database is adopted again.
    private func reportTablesOutsideCapture(_ schema: StoreSchema, _ installed: CaptureInstaller.Installed, on db: Connection) throws {
        let options = try Adoption.storedOptions(on: db)
        let new = try CaptureInstaller.tableNames(on: db).filter { schema.tables[$0] == nil && options.adopts($0) }.sorted()
        let text = try db.scalar("SELECT value FROM \(StoreMetadata.table) WHERE key = '\(Self.reportedKey)'")?.stringValue ?? "[]"
        let reported = Set((try? JSONDecoder().decode([String].self, from: Data(text.utf8))) ?? [])
        // Each change as it is said and as it is remembered (``CaptureInstaller/Installed/changedKeys``).
        let changes = new.map { ("+" + $0, "+" + $0) } + installed.missing.map { ("-" + $0, "-" + $0) }
            + installed.changed.map { ("~" + $0, "~" + (installed.changedKeys[$0] ?? $0)) }
        let fresh = changes.filter { !reported.contains($0.1) }
        let unreported = fresh.map(\.0)
        guard !unreported.isEmpty else { return }
        let since = try Self.since(on: db)
        // A table renamed is said as such, not as one dropped and one made.
        let renamed = installed.renames.tables.filter { unreported.contains("-" + $0.key) && unreported.contains("+" + $0.value) }
        let added = unreported.filter { $0.hasPrefix("+") }.map { String($0.dropFirst()) }.filter { !renamed.values.contains($0) }
        let left = unreported.filter { $0.hasPrefix("-") }.map { String($0.dropFirst()) }.filter { renamed[$0] == nil }
        let hidden = left.filter(installed.hidden.contains)
        let dropped = left.filter { !hidden.contains($0) }
        var parts: [String] = []
        if !renamed.isEmpty {
            let pairs = renamed.sorted { $0.key < $1.key }
            parts.append("another program renamed \(pairs.map { "\($0.key) to \($0.value)" }.joined(separator: ", ")) after token \(since); writes to "
                         + "\(pairs.map(\.value).joined(separator: ", ")) are not captured")
        }
        if !added.isEmpty { parts.append("another program made \(added.joined(separator: ", ")) after token \(since); writes to \(added.count == 1 ? "it" : "them") are not captured") }
        if !dropped.isEmpty { parts.append("another program dropped \(dropped.joined(separator: ", "))") }
        for table in hidden {
            parts.append("another program gave \(table) a column named as the rowid its rows are identified by, which hides it: "
                         + "writes to \(table) since token \(since) may be missing or recorded under that column's values as keys, and are not captured")
        }
        let changed = unreported.filter { $0.hasPrefix("~") }.map { String($0.dropFirst()) }
        if !changed.isEmpty { parts.append("another program changed the columns of \(changed.joined(separator: ", "))") }
        try Self.recordGap(dropped + hidden + renamed.keys.sorted(), parts.joined(separator: "; ") + ": run tributary adopt again to bring the model in line", on: db)
        try recordDetectedSchemaChange(schema, installed.renames, options: options, on: db)
        let all = String(decoding: try JSONEncoder().encode((reported.union(fresh.map(\.1))).sorted()), as: UTF8.self)
        try StoreMetadata.write(on: db, [Self.reportedKey: all])
    }

    /// Records, as a schema transaction marked detected, the model another program's DDL
    /// gave the adopted database (what adopting it again would make of it), unless schema
    /// history has it already or the tables cannot be adopted as they are; what it renamed
    /// said as renamed (``ForeignRenames``).
    private func recordDetectedSchemaChange(_ schema: StoreSchema, _ renames: ForeignRenames, options: DatabaseAdoption, on db: Connection) throws {
        guard try SchemaHistory.exists(on: db),
              let inferred = try? SchemaInference(options: options).read(on: db, place: db.path),
              let model = try? ManagedObjectModel(entities: inferred.entities) else { return }
        let current = try SchemaHistory.model(at: .max, on: db) ?? schema.model
        try SchemaHistory.record(from: current, to: model, changes: renames.changes(from: current, to: model), detected: true, on: db)
    }

    /// The `_tributary_metadata` key listing the tables already reported outside capture.
    static let reportedKey = "captureReported"

    /// The token as of which the capture was last checked whole.
    static func since(on db: Connection) throws -> Int64 {
        try db.scalar("SELECT checkedToken FROM \(CaptureLog.state) WHERE id = 1")?.integerValue ?? 0
    }

    /// Records a history transaction without changes, process "capture gap", saying `line`;
    /// `tables` (entities of the model) are its entities.
    static func recordGap(_ tables: [String], _ line: String, on db: Connection) throws {
        Self.gaps.increment()
        let source = HistorySource(author: nil, contextName: line, processID: Self.gapSource.0, processName: Self.gapSource.1)
        let payload = try HistoryPayload.finish(body: [], count: 0, names: NameTable())
        var row = HistoryRecorder.HistoryRow(payload: payload, count: 0, entities: tables, source: source)
        if try ObjectTimelineIndex.exists(on: db) { row.objects = ObjectTimelineIndex.Entries() }
        _ = try HistoryRecorder.insertTransaction(row, sourceID: try HistoryRecorder.sourceID(source, on: db), on: db)
    }

    /// The database's schema cookie (`PRAGMA schema_version`).
    static func schemaVersion(on db: Connection) throws -> Int64 {
        try db.scalar("PRAGMA schema_version")?.integerValue ?? 0
    }
}
