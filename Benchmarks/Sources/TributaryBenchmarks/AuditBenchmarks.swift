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

    /// One object's timeline (its 100 changes) out of 10,000,000: 100,000 posts inserted in
    /// 1,000-row batches, then updated 99 times each in 100-change transactions that each
    /// touch 100 posts 1,000 keys apart (every transaction a hundred index blocks, the
    /// index's worst case). Milliseconds, median of 21; the same answer through an entity
    /// scan once, and, when the store is built, the index's write cost on two rounds of such
    /// updates (on over off, best of 3). `TRIBUTARY_BENCH_TIMELINE_STORE=PATH` keeps the
    /// store there and, when it exists, measures on it without building it again.
    static func objectTimeline() throws -> [Measurement] {
        let environment = ProcessInfo.processInfo.environment
        let changes = environment["TRIBUTARY_BENCH_TIMELINE_CHANGES"].flatMap { Int($0) } ?? 10_000_000
        let workload = TimelineWorkload(objects: changes / 100)
        if let kept = environment["TRIBUTARY_BENCH_TIMELINE_STORE"] {
            return try timeline(at: kept, workload, building: !FileManager.default.fileExists(atPath: kept))
        }
        return try Harness.withDirectory { try timeline(at: $0.appendingPathComponent("o.sqlite").path, workload, building: true) }
    }

    /// Posts updated in transactions of 100 posts spread over the table.
    struct TimelineWorkload {
        let objects: Int
        var stride: Int { max(1, objects / 100) }

        func build(_ coordinator: PersistentStoreCoordinator, rounds: Int) throws {
            try HistoryBenchmarks.insert(coordinator, rows: objects, batch: 1000, author: "importer")
            let ids = try coordinator.fetchObjectIDs(Tributary.FetchRequest(entityName: "Post"))
            for round in 0..<rounds {
                for first in 0..<stride {
                    var update = BatchUpdateRequest(entityName: "Post", propertiesToUpdate: ["title": .string("edit \(round)")])
                    update.objectIDs = Swift.stride(from: first, to: ids.count, by: stride).map { ids[$0] }
                    try coordinator.execute(update)
                }
            }
        }

        /// Building two rounds with the index over building them without, best of 3.
        func indexCost() throws -> Double {
            let times = try Harness.interleaved(rounds: 3, [true, false].map { index in
                { try Harness.withDirectory { dir in
                    let coordinator = try TributaryBench.open(dir.appendingPathComponent("c.sqlite").path, history: true, objectIndex: index)
                    return try Harness.time { try build(coordinator, rounds: 2) }
                } }
            })
            return times[0] / times[1]
        }
    }

    private static func timeline(at path: String, _ workload: TimelineWorkload, building: Bool) throws -> [Measurement] {
        let coordinator = try TributaryBench.open(path, history: true)
        var details: [(String, Any)] = []
        if building {
            details += [("index_cost_scattered_updates", try workload.indexCost()), ("build_s", try Harness.time { try workload.build(coordinator, rounds: 99) })]
        }
        let ids = try coordinator.fetchObjectIDs(Tributary.FetchRequest(entityName: "Post"))
        let target = ids[ids.count / 2 + 17]
        var filter = HistoryFilter()
        filter.objectIDs = [target]
        var found = 0
        var times: [Double] = []
        for _ in 0..<21 {
            times.append(try Harness.time {
                found = try coordinator.fetchHistory(.fetchHistory(withFilter: filter)).reduce(0) { $0 + $1.changes.count }
            } * 1000)
        }
        guard found == 100 else { throw TributaryError(.io, "the timeline holds \(found) changes, not 100") }
        var scanned = 0
        let scan = try Harness.time {
            var entity = HistoryFilter()
            entity.entities = ["Post"]
            try coordinator.enumerateHistoryChanges(.fetchHistory(withFilter: entity)) { if $0.objectID == target { scanned += 1 } }
        } * 1000
        guard scanned == 100 else { throw TributaryError(.io, "the scan found \(scanned) changes, not 100") }
        times.sort()
        return [
            Measurement(name: "object_timeline_ms", value: times[times.count / 2], unit: "ms", goal: "<= 10",
                        details: [("changes", workload.objects * 100), ("objects", workload.objects), ("transactions_of_the_object", 100), ("statistic", "median of 21"),
                                  ("min_ms", times[0]), ("max_ms", times[times.count - 1]), ("entity_scan_ms", scan)] + details),
        ]
    }
}
