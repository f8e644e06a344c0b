import Foundation
import Synchronization
import Tributary

/// Persistent history's measurements (issue 4).
enum HistoryBenchmarks {
    static let singleRows = 20_000

    /// Inserts `rows` posts from `offset` through Tributary's columnar batch insert, `batch` per transaction.
    static func insert(_ coordinator: PersistentStoreCoordinator, rows: Int, batch: Int, offset: Int = 0, author: String? = nil) throws {
        var j = offset
        while j < offset + rows {
            let end = min(j + batch, offset + rows)
            var values: [[AttributeValue]] = []
            values.reserveCapacity(end - j)
            for k in j..<end {
                values.append([.string(Workload.title(k)), .string(Workload.content(k)), .string(Workload.externalID(k)), .date(Date(timeIntervalSince1970: Workload.createdAt(k)))])
            }
            var request = BatchInsertRequest(entityName: "Post", columns: ["title", "content", "externalID", "createdAt"], rows: values)
            request.resultType = .statusOnly
            request.transaction = TransactionMetadata(author: author, contextName: "bench")
            try coordinator.execute(request)
            j = end
        }
    }

    static func timedInsert(history: Bool, chain: Bool = true, objectIndex: Bool = true, rows: Int, batch: Int) throws -> Double {
        try Harness.withDirectory { dir in
            let coordinator = try TributaryBench.open(dir.appendingPathComponent("h.sqlite").path, history: history, chain: chain, objectIndex: objectIndex)
            return try Harness.time { try insert(coordinator, rows: rows, batch: batch, author: "importer") }
        }
    }

    static func overhead() throws -> [Measurement] {
        let rows = Workload.rows
        func raw(_ tracked: Bool, _ rows: Int, _ batch: Int) -> Double {
            Harness.withDirectory { CoreDataLayout.insertPosts(at: $0.appendingPathComponent("cd.sqlite").path, rows: rows, batch: batch, tracked: tracked) }
        }
        // Five rounds: the two sides differ by a few tens of milliseconds, less than the
        // machine's run-to-run spread in three.
        let b = try Harness.interleaved(rounds: 5, [
            { try timedInsert(history: false, rows: rows, batch: Workload.batch) },
            { try timedInsert(history: true, rows: rows, batch: Workload.batch) },
            { raw(false, rows, Workload.batch) },
            { raw(true, rows, Workload.batch) },
            { try Harness.withDirectory { try GRDBAuditBaseline.insertPosts(at: $0.appendingPathComponent("g.sqlite").path) } },
            { try timedInsert(history: true, chain: false, rows: rows, batch: Workload.batch) },
            { try timedInsert(history: true, chain: false, objectIndex: false, rows: rows, batch: Workload.batch) },
        ])
        let s = try Harness.interleaved(rounds: 5, [
            { try timedInsert(history: false, rows: singleRows, batch: 1) },
            { try timedInsert(history: true, rows: singleRows, batch: 1) },
            { raw(false, singleRows, 1) },
            { raw(true, singleRows, 1) },
            { try timedInsert(history: true, chain: false, rows: singleRows, batch: 1) },
            { try timedInsert(history: true, chain: false, objectIndex: false, rows: singleRows, batch: 1) },
        ])
        let common: [(String, Any)] = [("statistic", "best of 5, interleaved"), ("design", "one zstd-compressed payload per transaction, the token its primary key, authors and contexts in a table of sources, each transaction hash-chained to the one before, an object index row per transaction and block of 64 keys")]
        return [
            Measurement(name: "history_overhead_batch", value: b[1] / b[0], unit: "ratio", goal: "<= 1.15",
                        details: [("rows", rows), ("batch", Workload.batch), ("off_s", b[0]), ("on_s", b[1]), ("coredata_layout_overhead", b[3] / b[2])] + common),
            Measurement(name: "history_overhead_single", value: s[1] / s[0], unit: "ratio", goal: "<= 1.6",
                        details: [("rows", singleRows), ("batch", 1), ("off_s", s[0]), ("on_s", s[1]), ("coredata_layout_overhead", s[3] / s[2])] + common),
            Measurement(name: "history_overhead_batch_chain_off", value: b[5] / b[0], unit: "ratio", goal: "<= 1.15",
                        details: [("rows", rows), ("batch", Workload.batch), ("off_s", b[0]), ("on_s", b[5]), ("chain_cost", b[1] / b[5])] + common),
            Measurement(name: "history_overhead_batch_chain_index_off", value: b[6] / b[0], unit: "ratio", goal: "<= 1.15",
                        details: [("rows", rows), ("batch", Workload.batch), ("off_s", b[0]), ("on_s", b[6]), ("object_index_cost", b[5] / b[6])] + common),
            Measurement(name: "history_overhead_single_chain_off", value: s[4] / s[0], unit: "ratio", goal: "<= 1.6",
                        details: [("rows", singleRows), ("batch", 1), ("off_s", s[0]), ("on_s", s[4]), ("chain_cost", s[1] / s[4])] + common),
            Measurement(name: "history_overhead_single_chain_index_off", value: s[5] / s[0], unit: "ratio", goal: "<= 1.6",
                        details: [("rows", singleRows), ("batch", 1), ("off_s", s[0]), ("on_s", s[5]), ("object_index_cost", s[4] / s[5])] + common),
            Measurement(name: "history_vs_grdb_batch", value: b[1] / b[4], unit: "ratio", goal: "<= 1.0",
                        details: [("rows", rows), ("tributary_tracked_s", b[1]), ("grdb_audit_s", b[4]), ("grdb_design", "TransactionObserver collecting rowIDs; rows read and written as JSON to an audit table before commit")] + common),
        ]
    }

    /// 1,000,000 recorded changes (plus other authors' and entities' noise), fetched and decoded
    /// filtered by author and entity, against a raw scan of as many rows; then pruned under a writer.
    static func fetchAndPrune() throws -> [Measurement] {
        let changes = ProcessInfo.processInfo.environment["TRIBUTARY_BENCH_CHANGES"].flatMap { Int($0) } ?? 1_000_000
        return try Harness.withDirectory { dir in
            let path = dir.appendingPathComponent("big.sqlite").path
            let coordinator = try TributaryBench.open(path, history: true)
            try insert(coordinator, rows: changes, batch: 1000, author: "importer")
            for i in 0..<100 {
                var request = BatchInsertRequest(entityName: "Tag", columns: ["name"], rows: (0..<100).map { [.string("tag-\(i)-\($0)")] })
                request.transaction = TransactionMetadata(author: "other")
                try coordinator.execute(request)
            }
            let store = coordinator.persistentStores[0]
            _ = store
            var filter = HistoryFilter()
            filter.authors = ["importer"]
            filter.entities = ["Post"]
            var request = PersistentHistoryChangeRequest.fetchHistory(withFilter: filter)
            request.fetchBatchSize = 50
            var decoded = 0, batched = 0
            var scanned = 0
            var checksum = 0
            let times = try Harness.interleaved([
                {
                    // The change cursor, reading every value of every change.
                    decoded = 0
                    return try Harness.time {
                        try coordinator.enumerateHistoryChanges(request) { change in
                            decoded += 1
                            try change.forEachProperty { _, _, after in
                                if case .string(let s)? = after { checksum &+= s.utf8.count }
                            }
                        }
                    }
                },
                { let (rows, seconds) = RawSQLite.fetchPosts(at: path); scanned = rows; return seconds },
                {
                    batched = 0
                    return try Harness.time {
                        try coordinator.enumerateHistory(request) { batch in
                            for transaction in batch {
                                for change in transaction.changes {
                                    batched += 1
                                    for property in change.properties { if case .string(let s)? = property.after { checksum &+= s.utf8.count } }
                                }
                            }
                        }
                    }
                },
            ])
            precondition(decoded == changes && batched == changes && scanned == changes && checksum != 0, "decoded \(decoded), batched \(batched), scanned \(scanned)")
            let bytes = try historyBytes(path)
            let fetch = Measurement(name: "history_fetch_vs_scan", value: (Double(decoded) / times[0]) / (Double(scanned) / times[1]), unit: "ratio", goal: ">= 0.5",
                                    details: [("changes", decoded), ("history_changes_per_s", Double(decoded) / times[0]), ("scan_rows_per_s", Double(scanned) / times[1]),
                                              ("tributary_path", "enumerateHistoryChanges (change cursor), every value read"),
                                              ("batched_changes_per_s", Double(batched) / times[2]), ("batched_ratio", (Double(batched) / times[2]) / (Double(scanned) / times[1])),
                                              ("filter", "author importer, entity Post, among 10,000 other-author Tag changes"), ("statistic", "best of 3, interleaved")])
            let size = Measurement(name: "history_bytes_per_change", value: Double(bytes) / Double(changes + 10_000), unit: "bytes", goal: "<= 100",
                                   details: [("history_bytes", bytes), ("changes", changes + 10_000), ("note", "pages of the history table and its indexes (dbstat), blog posts with ~90 bytes of values each")])
            let prune = try pruneUnderWriter(coordinator)
            return [fetch, size, prune]
        }
    }

    static func historyBytes(_ path: String) throws -> Int {
        let raw = RawSQLite(path: path)
        let statement = raw.prepare("SELECT sum(pgsize) FROM dbstat WHERE name LIKE '_tributary_history%'")
        defer { sqlite3Finalize(statement) }
        return sqlite3Step(statement) ? Int(sqlite3ColumnInt64(statement, 0)) : 0
    }

    /// Prunes everything while a writer keeps saving single posts; reports the writer's longest save.
    static func pruneUnderWriter(_ coordinator: PersistentStoreCoordinator) throws -> Measurement {
        let stop = Atomic<Bool>(false)
        let worst = Mutex<(maximum: Double, saves: Int, baseline: Double)>((0, 0, 0))
        let writerCoordinator = coordinator
        // Baseline: the writer's longest save with nothing else going on.
        var baseline = 0.0
        for i in 0..<500 {
            baseline = max(baseline, try Harness.time { try insert(writerCoordinator, rows: 1, batch: 1, offset: 10_000_000 + i, author: "writer") })
        }
        let writer = Thread {
            var i = 20_000_000
            while !stop.load(ordering: .relaxed) {
                let seconds = (try? Harness.time { try insert(writerCoordinator, rows: 1, batch: 1, offset: i, author: "writer") }) ?? 0
                worst.withLock { $0.maximum = max($0.maximum, seconds); $0.saves += 1 }
                i += 1
            }
        }
        writer.start()
        let token = try coordinator.currentPersistentHistoryToken()
        let result = try Harness.time { _ = try coordinator.deleteHistory(.deleteHistory(before: token)) }
        stop.store(true, ordering: .relaxed)
        while !writer.isFinished { Thread.sleep(forTimeInterval: 0.01) }
        let w = worst.withLock { $0 }
        return Measurement(name: "prune_writer_max_wait_ms", value: w.maximum * 1000, unit: "ms", goal: "<= 50",
                           details: [("prune_s", result), ("writer_saves_during_prune", w.saves), ("writer_max_save_ms_without_prune", baseline * 1000),
                                     ("pruned_transactions", Int(token.value))])
    }
}
