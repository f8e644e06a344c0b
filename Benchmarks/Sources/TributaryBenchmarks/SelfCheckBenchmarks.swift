import Foundation

/// Checks of the harness itself, without Tributary: run only when named
/// (`TributaryBenchmarks raw_vs_raw grdb_vs_raw`), never by a bare `make bench`.
///
/// `raw_vs_raw` puts the raw insert against itself through `Harness.interleaved`,
/// so its distance from 1.0 is the noise floor of every "best of 3, interleaved"
/// ratio (including any advantage of running first in a round).
/// `grdb_vs_raw` is informational: GRDB's insert rate over raw SQLite's.
enum SelfCheckBenchmarks {
    static let names: Set<String> = ["raw_vs_raw", "grdb_vs_raw"]

    static func rawVsRaw() throws -> [Measurement] {
        let n = Double(Workload.rows)
        let times = try Harness.interleaved([
            { Harness.withDirectory { RawSQLite.insertPosts(at: $0.appendingPathComponent("a.sqlite").path) } },
            { Harness.withDirectory { RawSQLite.insertPosts(at: $0.appendingPathComponent("b.sqlite").path) } },
        ])
        let (first, second) = (n / times[0], n / times[1])
        return [Measurement(name: "raw_vs_raw", value: second / first, unit: "ratio", goal: ">= 0.9",
                            details: [("first_rows_per_s", first), ("second_rows_per_s", second), ("rows", Workload.rows), ("batch", Workload.batch),
                                      ("statistic", "best of 3, interleaved (the first side always runs first in each round)"),
                                      ("peak_rss_mb", Harness.peakRSSMegabytes())])]
    }

    static func grdbVsRaw() throws -> [Measurement] {
        let n = Double(Workload.rows)
        let times = try Harness.interleaved([
            { Harness.withDirectory { RawSQLite.insertPosts(at: $0.appendingPathComponent("raw.sqlite").path) } },
            { try Harness.withDirectory { try GRDBBaseline.insertPosts(at: $0.appendingPathComponent("g.sqlite").path) } },
        ])
        let (raw, grdb) = (n / times[0], n / times[1])
        return [Measurement(name: "grdb_vs_raw", value: grdb / raw, unit: "ratio", goal: ">= 0",
                            details: [("grdb_rows_per_s", grdb), ("raw_rows_per_s", raw), ("rows", Workload.rows), ("batch", Workload.batch),
                                      ("grdb_path", "DatabaseQueue.inTransaction + cachedStatement.execute(arguments:)"),
                                      ("statistic", "best of 3, interleaved"), ("peak_rss_mb", Harness.peakRSSMegabytes())])]
    }
}
