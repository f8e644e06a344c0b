import Foundation
import Tributary

/// The store core's measurements (issue 2): batch insert and fetch against raw
/// SQLite, batch insert against GRDB. Each ratio is measured side by side.
enum StoreBenchmarks {
    static func batchInsert() throws -> [Measurement] {
        let n = Double(Workload.rows)
        let times = try Harness.interleaved([
            { Harness.withDirectory { RawSQLite.insertPosts(at: $0.appendingPathComponent("raw.sqlite").path) } },
            { try Harness.withDirectory { try TributaryBench.insertPosts(at: $0.appendingPathComponent("t.sqlite").path) } },
            { try Harness.withDirectory { try GRDBBaseline.insertPosts(at: $0.appendingPathComponent("g.sqlite").path) } },
            { try Harness.withDirectory { try TributaryBench.insertPosts(at: $0.appendingPathComponent("d.sqlite").path, form: .dictionaries) } },
        ])
        let (raw, tributary, grdb, dictionaries) = (n / times[0], n / times[1], n / times[2], n / times[3])
        let common: [(String, Any)] = [("rows", Workload.rows), ("batch", Workload.batch), ("rounds", 3), ("statistic", "best of 3, interleaved")]
        return [
            Measurement(name: "batch_insert_vs_raw", value: tributary / raw, unit: "ratio", goal: ">= 0.8",
                        details: [("tributary_rows_per_s", tributary), ("raw_rows_per_s", raw), ("tributary_form", "columnar BatchInsertRequest(columns:rows:)"),
                                  ("dictionary_form_rows_per_s", dictionaries), ("dictionary_form_ratio", dictionaries / raw)] + common),
            Measurement(name: "batch_insert_vs_grdb", value: tributary / grdb, unit: "ratio", goal: ">= 1.0",
                        details: [("tributary_rows_per_s", tributary), ("grdb_rows_per_s", grdb), ("dictionary_form_ratio", dictionaries / grdb), ("grdb_path", "DatabaseQueue.inTransaction + cachedStatement.execute(arguments:)")] + common),
        ]
    }

    /// How much of the insert time is spent building the request's dictionaries (a diagnostic).
    static func dictionaryCost() throws -> [Measurement] {
        let seconds = Harness.time {
            var total = 0
            for k in 0..<Workload.rows {
                let object: [String: AttributeValue] = [
                    "title": .string(Workload.title(k)),
                    "content": .string(Workload.content(k)),
                    "externalID": .string(Workload.externalID(k)),
                    "createdAt": .date(Date(timeIntervalSince1970: Workload.createdAt(k))),
                ]
                total &+= object.count
            }
            precondition(total > 0)
        }
        return [Measurement(name: "diagnostic_dictionary_build_us_per_row", value: seconds / Double(Workload.rows) * 1e6, unit: "us", goal: "<= 100")]
    }

    static func fetch() throws -> [Measurement] {
        try Harness.withDirectory { dir in
            // One store, written by Tributary, read by both sides.
            let path = dir.appendingPathComponent("fetch.sqlite").path
            _ = try TributaryBench.insertPosts(at: path)
            var rawRows = 0, tributaryRows = 0, batchedRows = 0
            let times = try Harness.interleaved([
                { let (rows, s) = RawSQLite.fetchPosts(at: path); rawRows = rows; return s },
                { let (rows, s) = try TributaryBench.fetchPosts(at: path); tributaryRows = rows; return s },
                { let (rows, s) = try TributaryBench.fetchPosts(at: path, batched: true); batchedRows = rows; return s },
            ])
            precondition(rawRows == tributaryRows && rawRows == batchedRows && rawRows == Workload.rows)
            let raw = Double(rawRows) / times[0], tributary = Double(tributaryRows) / times[1], batched = Double(batchedRows) / times[2]
            return [Measurement(name: "fetch_vs_raw", value: tributary / raw, unit: "ratio", goal: ">= 0.7",
                                details: [("tributary_rows_per_s", tributary), ("raw_rows_per_s", raw), ("tributary_path", "enumerateRows (row cursor), every value read"),
                                          ("batched_rows_per_s", batched), ("batched_ratio", batched / raw), ("rows", rawRows), ("statistic", "best of 3, interleaved")])]
        }
    }
}
