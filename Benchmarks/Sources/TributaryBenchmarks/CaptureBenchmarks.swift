import CSQLiteBench
import Foundation
import Tributary

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

    /// Where `capture_foreign_insert_batch`'s cost lies, for the record: the same foreign
    /// inserts into the capture store with its `BEFORE INSERT` probe (which logs the rows an
    /// `INSERT OR REPLACE` removes) dropped, so only the insert's log trigger runs, and with
    /// the probe replaced by one whose `WHEN` is constant false (what any `BEFORE INSERT`
    /// trigger costs before it looks at a row); each against the store without capture.
    static func insertFloor() throws -> [Measurement] {
        let rows = Workload.rows
        func side(capture: Bool, probe: String?) -> () throws -> Double {
            {
                try Harness.withDirectory { dir in
                    let path = dir.appendingPathComponent("p.sqlite").path
                    try store(path, capture: capture)
                    if capture {
                        let raw = RawSQLite(path: path)
                        raw.exec(#"DROP TRIGGER "_tributary_capture_\#(postTableID(path))_r""#)
                        if let probe { raw.exec(#"CREATE TRIGGER "floor_probe" BEFORE INSERT ON "Post" WHEN \#(probe) BEGIN SELECT 1; END"#) }
                    }
                    return RawSQLite.insertPosts(at: path, rows: rows, createSchema: false)
                }
            }
        }
        let times = try Harness.interleaved(rounds: 5, [side(capture: false, probe: nil), side(capture: true, probe: nil), side(capture: true, probe: "0")])
        let common: [(String, Any)] = [("statistic", "best of 5, interleaved"), ("rows", rows), ("batch", Workload.batch),
                                       ("writer", "SQLite C API, no Tributary in the writing connection"), ("note", "informational: no goal (>= 0, as for the diagnostics)")]
        return [
            Measurement(name: "diagnostic_capture_insert_log_only", value: times[1] / times[0], unit: "ratio", goal: ">= 0",
                        details: [("off_s", times[0]), ("on_s", times[1]), ("capture", "the insert's log trigger only (the REPLACE probe dropped)")] + common),
            Measurement(name: "diagnostic_capture_insert_empty_probe", value: times[2] / times[0], unit: "ratio", goal: ">= 0",
                        details: [("off_s", times[0]), ("on_s", times[2]), ("capture", "the insert's log trigger and a BEFORE INSERT trigger WHEN 0")] + common),
        ]
    }

    /// The capture ID of the `Post` table in the store at `path` (its triggers' names carry it).
    private static func postTableID(_ path: String) -> String {
        let raw = RawSQLite(path: path)
        let statement = raw.prepare(#"SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'Post' AND name LIKE '\_tributary\_capture\_%\_r' ESCAPE '\'"#)
        defer { sqlite3_finalize(statement) }
        precondition(sqlite3_step(statement) == SQLITE_ROW, "the capture store has a REPLACE probe on Post")
        return String(String(cString: sqlite3_column_text(statement, 0)).dropFirst("_tributary_capture_".count).dropLast(2))
    }

    /// What capture costs on an adopted `WITHOUT ROWID` table (each insert also numbers its
    /// key in `_tributary_keys_<table>`), beside the same table with a rowid and a text key:
    /// capture on (adopted) against off (not adopted), each side in a fresh database.
    static func withoutRowid() throws -> [Measurement] {
        let rows = Workload.rows
        func side(withoutRowid: Bool, adopt: Bool) -> () throws -> Double {
            {
                try Harness.withDirectory { dir in
                    let path = dir.appendingPathComponent("w.sqlite").path
                    RawSQLite(path: path).exec(#"CREATE TABLE "Item" ("name" TEXT PRIMARY KEY, "title" TEXT, "content" TEXT, "createdAt" REAL)"# + (withoutRowid ? " WITHOUT ROWID" : ""))
                    if adopt { _ = try PersistentStoreCoordinator.adoptDatabase(at: URL(fileURLWithPath: path)) }
                    return RawSQLite.insertItems(at: path, rows: rows)
                }
            }
        }
        let withoutRowid = try Harness.interleaved(rounds: 5, [side(withoutRowid: true, adopt: false), side(withoutRowid: true, adopt: true)])
        let textKey = try Harness.interleaved(rounds: 5, [side(withoutRowid: false, adopt: false), side(withoutRowid: false, adopt: true)])
        let own = try Harness.interleaved(rounds: 5, [ownInserts(withoutRowid: false, rows: rows), ownInserts(withoutRowid: true, rows: rows)])
        let common: [(String, Any)] = [("statistic", "best of 5, interleaved"), ("rows", rows), ("batch", Workload.batch),
                                       ("writer", "SQLite C API, no Tributary in the writing connection"),
                                       ("note", "informational: no goal (>= 0, as for the diagnostics)")]
        return [
            Measurement(name: "capture_without_rowid_insert_batch", value: withoutRowid[1] / withoutRowid[0], unit: "ratio", goal: ">= 0",
                        details: [("off_s", withoutRowid[0]), ("on_s", withoutRowid[1]), ("table", "WITHOUT ROWID, TEXT PRIMARY KEY")] + common),
            Measurement(name: "capture_text_key_insert_batch", value: textKey[1] / textKey[0], unit: "ratio", goal: ">= 0",
                        details: [("off_s", textKey[0]), ("on_s", textKey[1]), ("table", "rowid, TEXT PRIMARY KEY")] + common),
            Measurement(name: "own_without_rowid_insert_batch", value: own[1] / own[0], unit: "ratio", goal: ">= 0",
                        details: [("rowid_s", own[0]), ("without_rowid_s", own[1]), ("statistic", "best of 5, interleaved"), ("rows", rows), ("batch", Workload.batch),
                                  ("writer", "Tributary's columnar batch inserts, history on, into the adopted table: WITHOUT ROWID (through the capture triggers, folded at commit) over the same table with a rowid (the pre-update hook)"),
                                  ("note", "informational: no goal (>= 0, as for the diagnostics)")]),
        ]
    }

    /// Tributary's own batch inserts into an adopted `Item` table with a text key, with a
    /// rowid or `WITHOUT ROWID`; returns seconds.
    private static func ownInserts(withoutRowid: Bool, rows: Int) -> () throws -> Double {
        {
            try Harness.withDirectory { dir in
                let path = dir.appendingPathComponent("o.sqlite").path
                RawSQLite(path: path).exec(#"CREATE TABLE "Item" ("name" TEXT PRIMARY KEY, "title" TEXT, "content" TEXT, "createdAt" REAL)"# + (withoutRowid ? " WITHOUT ROWID" : ""))
                _ = try PersistentStoreCoordinator.adoptDatabase(at: URL(fileURLWithPath: path))
                let coordinator = PersistentStoreCoordinator()
                let description = PersistentStoreDescription(url: URL(fileURLWithPath: path))
                description.persistentHistoryTracking = true
                try coordinator.addPersistentStore(with: description)
                return try Harness.time {
                    for start in stride(from: 0, to: rows, by: Workload.batch) {
                        let values: [[AttributeValue]] = (start..<min(start + Workload.batch, rows)).map {
                            [.string(Workload.externalID($0)), .string(Workload.title($0)), .string(Workload.content($0)), .double(Workload.createdAt($0))]
                        }
                        var request = BatchInsertRequest(entityName: "Item", columns: ["name", "title", "content", "createdAt"], rows: values)
                        request.resultType = .statusOnly
                        try coordinator.execute(request)
                    }
                }
            }
        }
    }

    /// Bytes of stored history payload per change: the workload's inserts written by a
    /// foreign program (folded into history) against the same inserts through Tributary,
    /// each in the same transactions of ``Workload/batch`` rows.
    static func bytesPerChange() throws -> [Measurement] {
        try Harness.withDirectory { dir in
            let own = dir.appendingPathComponent("own.sqlite").path, foreign = dir.appendingPathComponent("foreign.sqlite").path
            _ = try TributaryBench.insertPosts(at: own, history: true)
            try store(foreign, capture: true)
            _ = RawSQLite.insertPosts(at: foreign, rows: Workload.rows, createSchema: false)
            let sizes = try [own, foreign].map { try TributaryBench.open($0, history: true).historySize() }
            let perChange = sizes.map { Double($0.payloadBytes) / Double(max(1, $0.changes)) }
            return [Measurement(name: "capture_foreign_bytes_per_change_ratio", value: perChange[1] / perChange[0], unit: "ratio", goal: "<= 1.5",
                                details: [("own_bytes_per_change", perChange[0]), ("foreign_bytes_per_change", perChange[1]),
                                          ("own_changes", sizes[0].changes), ("foreign_changes", sizes[1].changes), ("foreign_transactions", sizes[1].transactions),
                                          ("note", "stored payload bytes (compressed), \(Workload.batch)-row insert transactions")])]
        }
    }
}
