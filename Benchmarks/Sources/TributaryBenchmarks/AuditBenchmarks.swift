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
}
