import CSQLiteBench
import Foundation
import Synchronization
import Tributary

/// How soon a running history watcher sees what another program committed (issue 22):
/// a connection of SQLite's C API without Tributary inserts one post per transaction into
/// a store whose history captures foreign writes, while a ``HistoryWatcher`` of the same
/// store (woken by the log file's change, folding on its fetch) runs in a task.
///
/// - paced: one commit every 5 ms; the lag of each from its `COMMIT` returning to the
///   handler receiving its transaction (transactions arrive in commit order, one per
///   commit, so the n-th arrival is the n-th commit);
/// - full speed: commits as fast as the writer can for a few seconds; the backlog
///   (committed, not yet delivered) sampled every 250 ms, and the time from the writer's
///   stop until every commit was delivered: a fold that kept up leaves almost nothing
///   to catch up on, one that fell behind a backlog growing with time.
enum CaptureLagBenchmarks {
    static let pacedCommits = ProcessInfo.processInfo.environment["TRIBUTARY_BENCH_LAG_COMMITS"].flatMap { Int($0) } ?? 2_000
    static let fullSpeedSeconds = 5.0

    /// Arrival times of delivered transactions, in order.
    final class Arrivals: Sendable {
        private let times = Mutex<[Int64]>([])
        func record(_ batch: [PersistentHistoryTransaction]) {
            let t = NotificationBenchmarks.now()
            times.withLock { $0 += Array(repeating: t, count: batch.count) }
        }
        var count: Int { times.withLock { $0.count } }
        var all: [Int64] { times.withLock { $0 } }
    }

    /// A foreign writer: single-row insert transactions through the C API.
    final class ForeignWriter {
        let raw: RawSQLite
        let insert: OpaquePointer
        var next = 0

        init(path: String) {
            raw = RawSQLite(path: path)
            raw.exec("PRAGMA busy_timeout = 5000")
            insert = raw.prepare(#"INSERT INTO "Post" ("title", "content", "externalID", "createdAt") VALUES (?, ?, ?, ?)"#)
        }

        deinit { sqlite3_finalize(insert) }

        /// Commits one post; the monotonic time `COMMIT` returned.
        func commit() -> Int64 {
            raw.exec("BEGIN")
            RawSQLite.bind(insert, 1, "lag-\(next)")
            RawSQLite.bind(insert, 2, Workload.content(next))
            RawSQLite.bind(insert, 3, "lag-e\(next)")
            sqlite3_bind_double(insert, 4, Workload.createdAt(next))
            precondition(sqlite3_step(insert) == SQLITE_DONE)
            sqlite3_reset(insert)
            raw.exec("COMMIT")
            next += 1
            return NotificationBenchmarks.now()
        }
    }

    static func lag() throws -> [Measurement] {
        try Harness.withDirectory { dir in
            let path = dir.appendingPathComponent("lag.sqlite").path
            try CaptureBenchmarks.store(path, capture: true)
            let arrivals = Arrivals()
            let coordinator = try NotificationBenchmarks.open(path)
            let watcher = try HistoryWatcher(coordinator: coordinator, configuration: HistoryWatcher.Configuration())
            let task = Task { await watcher.run { arrivals.record($0) } }
            defer { task.cancel() }
            Thread.sleep(forTimeInterval: 0.2)  // the loop is listening
            let writer = ForeignWriter(path: path)

            var commits: [Int64] = []
            for _ in 0..<pacedCommits {
                commits.append(writer.commit())
                usleep(5_000)
            }
            waitFor(arrivals, count: commits.count, seconds: 10)
            let delivered = arrivals.all
            let samples = zip(commits, delivered).map { Double(max(0, $1 - $0)) / 1e6 }
            var result = NotificationBenchmarks.latencies(samples, prefix: "capture_fold_lag", p50Goal: nil, p99Goal: "<= 20")
            result[0].details = [("p50_ms", NotificationBenchmarks.percentile(samples.sorted(), 0.5)), ("commits", commits.count),
                                 ("delivered", delivered.count), ("pace_ms", 5)] + result[0].details
            result.append(try fullSpeed(writer, arrivals, before: commits.count))
            return result
        }
    }

    /// The writer at full speed for ``fullSpeedSeconds``; the backlog over time.
    static func fullSpeed(_ writer: ForeignWriter, _ arrivals: Arrivals, before: Int) throws -> Measurement {
        var backlog: [Int] = []
        let start = Date()
        var lastSample = start
        var committed = before
        while Date().timeIntervalSince(start) < fullSpeedSeconds {
            _ = writer.commit()
            committed += 1
            if Date().timeIntervalSince(lastSample) >= 0.25 {
                backlog.append(committed - arrivals.count)
                lastSample = Date()
            }
        }
        let stopped = Date()
        waitFor(arrivals, count: committed, seconds: 30)
        let catchUp = arrivals.count >= committed ? Date().timeIntervalSince(stopped) * 1000 : .infinity
        let half = backlog.count / 2
        return Measurement(name: "capture_fold_catch_up_ms", value: catchUp, unit: "ms", goal: "<= 100",
                           details: [("commits", committed - before), ("commits_per_s", Double(committed - before) / fullSpeedSeconds),
                                     ("backlog_max_first_half", backlog.prefix(half).max() ?? 0), ("backlog_max_second_half", backlog.suffix(backlog.count - half).max() ?? 0),
                                     ("backlog_last", backlog.last ?? 0), ("delivered", arrivals.count - before), ("note", "shared machine")])
    }

    static func waitFor(_ arrivals: Arrivals, count: Int, seconds: Double) {
        let deadline = Date().addingTimeInterval(seconds)
        while arrivals.count < count, Date() < deadline { usleep(1_000) }
    }
}
