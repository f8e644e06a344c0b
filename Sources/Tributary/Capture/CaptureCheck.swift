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
    static let gapSource: (Int32, String) = (-3, "capture gap")
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
            try recordGap(installed.drifted, on: db)
            Self.gaps.increment()
        }
        try db.execute("UPDATE \(CaptureLog.state) SET checkedToken = (\(HistorySchema.newestTokenSQL)) WHERE id = 1")
        checkedVersion = try Self.schemaVersion(on: db)
        return installed.tables
    }

    private func recordGap(_ tables: [String], on db: Connection) throws {
        let since = try db.scalar("SELECT checkedToken FROM \(CaptureLog.state) WHERE id = 1")?.integerValue ?? 0
        let names = tables.joined(separator: ", ")
        let line = "writes by other programs to \(names) since token \(since) may be missing: "
            + "the capture triggers of \(tables.count == 1 ? "that table" : "those tables") had been dropped or altered (installed again)"
        let source = try HistoryRecorder.sourceID(author: nil, contextName: line, processID: Self.gapSource.0, processName: Self.gapSource.1, on: db)
        let payload = try HistoryPayload.finish(body: [], count: 0, names: NameTable())
        _ = try HistoryRecorder.insertTransaction(payload: payload, count: 0, entities: tables, sourceID: source, timestamp: Date(), on: db)
    }

    private static func schemaVersion(on db: Connection) throws -> Int64 {
        try db.scalar("PRAGMA schema_version")?.integerValue ?? 0
    }
}
