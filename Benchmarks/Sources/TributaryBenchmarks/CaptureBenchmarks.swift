import CSQLiteBench
import Foundation

/// The cost of capturing other programs' writes (issue 22): a program that does not use
/// Tributary writes a store through SQLite's C API, once into a store whose history
/// captures foreign writes (the capture triggers installed) and once into the same store
/// without history (no capture triggers); both have the model's own derived-attribute
/// triggers. Each side runs in a fresh store; sides interleave, best of five.
enum CaptureBenchmarks {
    static let singleRows = 5_000

    /// A blog store at `path`, made by Tributary (with capture when `capture`), then closed.
    static func store(_ path: String, capture: Bool) throws {
        let coordinator = try TributaryBench.open(path, history: capture)
        for store in coordinator.persistentStores { coordinator.remove(store) }
    }

    static func foreign() throws -> [Measurement] {
        let rows = Workload.rows
        func side(capture: Bool, _ body: @escaping (String) -> Double) -> () throws -> Double {
            {
                try Harness.withDirectory { dir in
                    let path = dir.appendingPathComponent("f.sqlite").path
                    try store(path, capture: capture)
                    return body(path)
                }
            }
        }
        let inserts = try Harness.interleaved(rounds: 5, [
            side(capture: false) { RawSQLite.insertPosts(at: $0, rows: rows, createSchema: false) },
            side(capture: true) { RawSQLite.insertPosts(at: $0, rows: rows, createSchema: false) },
        ])
        let updates = try Harness.interleaved(rounds: 5, [
            side(capture: false) { RawSQLite.updatePosts(at: $0, rows: rows) },
            side(capture: true) { RawSQLite.updatePosts(at: $0, rows: rows) },
        ])
        let single = try Harness.interleaved(rounds: 5, [
            side(capture: false) { RawSQLite.insertPosts(at: $0, rows: singleRows, batch: 1, createSchema: false) },
            side(capture: true) { RawSQLite.insertPosts(at: $0, rows: singleRows, batch: 1, createSchema: false) },
        ])
        let common: [(String, Any)] = [("statistic", "best of 5, interleaved"), ("writer", "SQLite C API, no Tributary in the writing connection"),
                                       ("capture", "key-only insert log, one UPDATE OF trigger per column, full delete log, BEFORE INSERT probe of key and unique columns (REPLACE)")]
        return [
            Measurement(name: "capture_foreign_insert_batch", value: inserts[1] / inserts[0], unit: "ratio", goal: "<= 1.6",
                        details: [("rows", rows), ("batch", Workload.batch), ("off_s", inserts[0]), ("on_s", inserts[1])] + common),
            Measurement(name: "capture_foreign_update_batch", value: updates[1] / updates[0], unit: "ratio", goal: "<= 2.0",
                        details: [("rows", rows), ("batch", Workload.batch), ("columns", 1), ("off_s", updates[0]), ("on_s", updates[1])] + common),
            Measurement(name: "capture_foreign_single", value: single[1] / single[0], unit: "ratio", goal: "<= 1.3",
                        details: [("rows", singleRows), ("batch", 1), ("off_s", single[0]), ("on_s", single[1])] + common),
        ]
    }
}
