import Foundation
import Tributary

/// The audit trail's measurements (issue 24).
enum AuditBenchmarks {
    /// Verifying the hash chain of 1,000,000 changes in 1,000-change transactions, and of
    /// 100,000 in 10-change ones: changes a second (goal ≥ 1,000,000), best of 5.
    static func verifyRate() throws -> [Measurement] {
        let changes = ProcessInfo.processInfo.environment["TRIBUTARY_BENCH_CHANGES"].flatMap { Int($0) } ?? 1_000_000
        func rate(rows: Int, batch: Int) throws -> (Double, Int) {
            try Harness.withDirectory { dir in
                let coordinator = try TributaryBench.open(dir.appendingPathComponent("a.sqlite").path, history: true)
                try HistoryBenchmarks.insert(coordinator, rows: rows, batch: batch, author: "importer")
                var best = Double.infinity
                var transactions = 0
                for _ in 0..<5 {
                    var report: HistoryChainReport?
                    best = min(best, try Harness.time { report = try coordinator.verifyHistoryChain() })
                    guard let report else { continue }
                    guard report.problem == nil, report.changes == rows else { throw TributaryError(.io, "verify found \(String(describing: report.problem)) after \(report.changes) changes") }
                    transactions = report.transactions
                }
                return (Double(rows) / best, transactions)
            }
        }
        let (large, largeTransactions) = try rate(rows: changes, batch: 1000)
        let (small, smallTransactions) = try rate(rows: changes / 10, batch: 10)
        return [
            Measurement(name: "audit_verify_rate", value: large, unit: "changes/s", goal: ">= 1000000",
                        details: [("changes", changes), ("transactions", largeTransactions), ("statistic", "best of 5"),
                                  ("rate_10_change_transactions", small), ("transactions_10", smallTransactions)]),
        ]
    }

    /// Rows as of a point 100,000 changes back (updates of half the posts, in 1,000-change
    /// transactions) against a plain fetch of the same entity's rows: fetch time over
    /// as-of time (goal ≥ 0.2), best of 5 each, interleaved.
    static func asOfVsFetch() throws -> [Measurement] {
        try Harness.withDirectory { dir in
            let coordinator = try TributaryBench.open(dir.appendingPathComponent("t.sqlite").path, history: true)
            try HistoryBenchmarks.insert(coordinator, rows: Workload.rows, batch: 1000, author: "importer")
            let point = try coordinator.currentPersistentHistoryToken()
            let ids = try coordinator.fetchObjectIDs(Tributary.FetchRequest(entityName: "Post"))
            let changed = min(100_000, ids.count)
            for start in stride(from: 0, to: changed, by: 1000) {
                var update = BatchUpdateRequest(entityName: "Post", propertiesToUpdate: ["title": .string("edited")])
                update.objectIDs = Array(ids[start..<min(start + 1000, changed)])
                try coordinator.execute(update)
            }
            var rows = (0, 0)
            let times = try Harness.interleaved(rounds: 5, [
                { try Harness.time { rows.0 = try coordinator.fetch(Tributary.FetchRequest(entityName: "Post")).count } },
                { try Harness.time { rows.1 = try coordinator.fetch(Tributary.FetchRequest(entityName: "Post"), asOf: point).count } },
            ])
            guard rows.0 == rows.1 else { throw TributaryError(.io, "as of the point: \(rows.1) rows, now \(rows.0)") }
            return [
                Measurement(name: "as_of_query_vs_fetch", value: times[0] / times[1], unit: "ratio", goal: ">= 0.2",
                            details: [("rows", rows.0), ("changes_back", changed), ("fetch_s", times[0]), ("as_of_s", times[1]), ("statistic", "best of 5, interleaved")]),
            ]
        }
    }
}
