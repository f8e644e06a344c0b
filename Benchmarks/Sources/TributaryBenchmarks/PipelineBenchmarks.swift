import AsyncHTTPClient
import CSQLiteBench
import Foundation
import NIOCore
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Tributary
import TributaryPipeline
import TributaryStreams
import TributaryHTTPSink
import TributaryNATSSink
import TributaryPostgresSink
import TributaryRedisSink

private let transientText = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// The pipeline sinks end to end (history → runner → sink) against each sink's own bulk
/// path for the same data, and the latency from a commit to the record visible downstream.
enum PipelineBenchmarks {
    /// Runs async work to completion from the synchronous benchmark registry.
    static func blocking<T>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        nonisolated(unsafe) var result: Result<T, Error>?
        let done = DispatchSemaphore(value: 0)
        Task {
            do { result = .success(try await body()) } catch { result = .failure(error) }
            done.signal()
        }
        done.wait()
        return try result!.get()
    }

    /// Every sink type the benchmarks run, as `tributary run` registers them.
    static let sinks: SinkRegistry = SinkRegistry.standard.registering(HTTPSinkSettings.self, PostgresSinkSettings.self, NATSSinkSettings.self, RedisSinkSettings.self)

    static func runPipeline(_ yaml: String, store: String) throws -> Double {
        try blocking {
            let pipeline = try PipelineFile(yaml: yaml, path: "bench.yml", environment: [:], sinks: sinks)
            let coordinator = try TributaryBench.open(store, history: true)
            let runner = try PipelineRunner(pipeline: pipeline, coordinator: coordinator, sinks: pipeline.sinks.map { PipelineRunner.makeSink($0) })
            let clock = ContinuousClock()
            let start = clock.now
            while try await !runner.runOnce().caughtUp {}
            try await runner.finish()
            return Harness.seconds(clock.now - start)
        }
    }

    /// Changes for `sink_fts_vs_bulk`: 1,000,000 (the issue's figure), or `TRIBUTARY_BENCH_FTS_ROWS`.
    static let ftsRows = ProcessInfo.processInfo.environment["TRIBUTARY_BENCH_FTS_ROWS"].flatMap { Int($0) } ?? 1_000_000

    /// `sink_fts_vs_bulk`: the search pipeline over `ftsRows` inserted posts against one
    /// transaction of prepared FTS5 inserts of the same text.
    static func ftsVsBulk() throws -> [Measurement] {
        try Harness.withDirectory { dir in
            let store = dir.appendingPathComponent("s.sqlite").path
            let rows = ftsRows
            _ = try TributaryBench.insertPosts(at: store, rows: rows, history: true)
            var round = 0
            let times = try Harness.interleaved([
                {
                    round += 1
                    return try runPipeline("""
                        name: fts\(round)
                        source: {store: s}
                        sinks:
                          - type: fts
                            path: \(dir.appendingPathComponent("index-\(round).sqlite").path)
                            entities: {Post: [title, content]}
                            batch_size: 1000
                        checkpoint: {records: 10000, seconds: 1h}
                        """, store: store)
                },
                {
                    round += 1
                    let raw = RawSQLite(path: dir.appendingPathComponent("bulk-\(round).sqlite").path)
                    raw.exec("CREATE VIRTUAL TABLE fts USING fts5(content, tokenize = 'unicode61 remove_diacritics 2')")
                    return Harness.time {
                        raw.exec("BEGIN")
                        let insert = raw.prepare("INSERT INTO fts(rowid, content) VALUES (?, ?)")
                        for j in 0..<rows {
                            sqlite3_bind_int64(insert, 1, Int64(j + 1))
                            RawSQLite.bind(insert, 2, Workload.title(j) + "\n" + Workload.content(j))
                            precondition(sqlite3_step(insert) == SQLITE_DONE)
                            sqlite3_reset(insert)
                        }
                        sqlite3_finalize(insert)
                        raw.exec("COMMIT")
                    }
                },
            ])
            return [Measurement(name: "sink_fts_vs_bulk", value: times[1] / times[0], unit: "ratio", goal: ">= 0.5",
                                details: [("changes", rows), ("pipeline_changes_per_s", Double(rows) / times[0]), ("bulk_rows_per_s", Double(rows) / times[1])])]
        }
    }

    /// Changes for the HTTP sink's throughput: 1,000,000 (the issue's figure), or `TRIBUTARY_BENCH_HTTP_ROWS`.
    static let httpRows = ProcessInfo.processInfo.environment["TRIBUTARY_BENCH_HTTP_ROWS"].flatMap { Int($0) } ?? 1_000_000

    /// Wall-clock and CPU seconds (every thread of the process: client, event loop, endpoint) of one run.
    struct Cost {
        var wall = Double.infinity
        var cpu = 0.0
    }

    /// Runs `body`, keeping its cost in `best` when its wall-clock time is the best so far; returns the wall-clock time.
    static func costed(_ best: inout Cost, _ body: () throws -> Double) rethrows -> Double {
        let before = processCPUSeconds()
        let wall = try body()
        if wall < best.wall { best = Cost(wall: wall, cpu: processCPUSeconds() - before) }
        return wall
    }

    /// User and system CPU seconds of this process so far.
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// The records the pipeline delivers for `store`'s history, made as the runner makes them.
    static func records(store: String) throws -> [StreamRecord] {
        let coordinator = try TributaryBench.open(store, history: true)
        let storeID = coordinator.persistentStores[0].identifier
        var records: [StreamRecord] = []
        try coordinator.enumerateHistoryChanges(.fetchHistory(after: nil)) { view in
            let change = try view.copy()
            records.append(StreamRecord(position: StreamPosition(token: view.token.value, index: view.index), storeID: storeID, timestamp: view.timestamp,
                                        author: view.author, contextName: view.contextName, operation: StreamOperation(view.changeType),
                                        objectID: change.changedObjectID, properties: change.properties))
        }
        return records
    }

    /// `sink_http_vs_bulk` and `sink_http_vs_direct`: the webhook pipeline (history → runner →
    /// HTTP sink, batches of 1,000) over `httpRows` inserted posts, against two baselines
    /// interleaved with it, all posting to the same endpoint through the same client
    /// (AsyncHTTPClient's shared client):
    ///
    /// - the issue's: the endpoint's raw request rate, the same number of POSTs of the same
    ///   size (bodies of spaces, ready before the clock starts), one after another;
    /// - the sink's own path (what history and the runner cost on top of the sink): the same records, made in memory in the same batches before the
    ///   clock starts, delivered by an HTTP sink (encoding and posting, without history or the
    ///   runner), as the FTS figure's baseline does the index's own work on the same text.
    ///
    /// Each side's CPU time (all threads, the endpoint's included) is reported per change.
    static func httpVsBulk() throws -> [Measurement] {
        try Harness.withDirectory { dir in
            let store = dir.appendingPathComponent("s.sqlite").path
            let rows = httpRows
            _ = try TributaryBench.insertPosts(at: store, rows: rows, history: true)
            let records = try Self.records(store: store)
            precondition(records.count == rows, "one record per inserted post")
            let batches = stride(from: 0, to: rows, by: 1000).map { Array(records[$0..<min(rows, $0 + 1000)]) }
            let coordinator = try TributaryBench.open(store, history: true)
            let context = SinkContext(pipeline: "direct", storeID: coordinator.persistentStores[0].identifier, model: coordinator.persistentStores[0].model)
            let server = BenchHTTPServer()
            defer { server.stop() }
            var round = 0
            var requests = 0, bytes = 0
            var pipeline = Cost(), raw = Cost(), direct = Cost()
            _ = try Harness.interleaved([
                {
                    round += 1
                    let before = server.state.withLock { ($0.requests, $0.bytes) }
                    let seconds = try costed(&pipeline) {
                        try runPipeline("name: http\(round)\nsource: {store: s}\nsinks:\n  - type: http\n    url: \(server.url)\n    batch_size: 1000\ncheckpoint: {records: 10000, seconds: 1h}\n", store: store)
                    }
                    let after = server.state.withLock { ($0.requests, $0.bytes) }
                    requests = after.0 - before.0
                    bytes = after.1 - before.1
                    return seconds
                },
                {
                    let count = max(1, requests), size = max(1, bytes / max(1, requests))
                    let url = server.url
                    let body = ByteBuffer(repeating: 0x20, count: size)
                    return try costed(&raw) {
                        try blocking {
                            let clock = ContinuousClock()
                            let start = clock.now
                            for i in 0..<count {
                                var request = HTTPClientRequest(url: url.absoluteString)
                                request.method = .POST
                                request.headers.add(name: "Content-Type", value: "application/json")
                                request.headers.add(name: "Idempotency-Key", value: "bulk-\(i)")
                                request.body = .bytes(body)
                                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
                                _ = try await response.body.collect(upTo: 1 << 20)
                            }
                            return Harness.seconds(clock.now - start)
                        }
                    }
                },
                {
                    let before = server.state.withLock { $0.bytes }
                    let url = server.url
                    let seconds = try costed(&direct) {
                        try blocking {
                            let sink = HTTPSink(name: "direct", url: url)
                            let clock = ContinuousClock()
                            let start = clock.now
                            _ = try await sink.open(context)
                            for batch in batches { try await sink.deliver(batch) }
                            _ = try await sink.checkpoint(through: records[records.count - 1].position)
                            try await sink.close()
                            return Harness.seconds(clock.now - start)
                        }
                    }
                    precondition(server.state.withLock { $0.bytes } - before == bytes, "the sink alone posts the pipeline's bodies")
                    return seconds
                },
            ])
            func perChange(_ cost: Cost) -> Double { (cost.cpu / Double(rows) * 1e8).rounded() / 100 }
            let common: [(String, Any)] = [
                ("changes", rows), ("requests", requests), ("bytes_per_request", bytes / max(1, requests)),
                ("pipeline_changes_per_s", Double(rows) / pipeline.wall), ("pipeline_cpu_us_per_change", perChange(pipeline)),
            ]
            return [
                Measurement(name: "sink_http_vs_bulk", value: raw.wall / pipeline.wall, unit: "ratio", goal: ">= 0.5",
                            details: common + [("raw_changes_per_s", Double(rows) / raw.wall), ("raw_cpu_us_per_change", perChange(raw))]),
                Measurement(name: "sink_http_vs_direct", value: direct.wall / pipeline.wall, unit: "ratio", goal: ">= 0.5",
                            details: common + [("direct_changes_per_s", Double(rows) / direct.wall), ("direct_cpu_us_per_change", perChange(direct))]),
            ]
        }
    }

    /// `sink_fts_latency_p99_ms` and `sink_http_latency_p99_ms`: 300 single-post commits, one
    /// every 10 ms, while the pipeline service runs (waiting for commits on the store's remote
    /// change notifications); the time from each commit to the record in the index (the runner's step
    /// that indexed it returned) or at the endpoint.
    static func latency() throws -> [Measurement] {
        try Harness.withDirectory { dir in
            let server = BenchHTTPServer()
            defer { server.stop() }
            server.state.withLock { $0.trackArrivals = true }
            let store = dir.appendingPathComponent("l.sqlite").path
            // The writer posts remote change notifications, as an application beside a pipeline would.
            let writer = try TributaryBench.open(store, history: true, notify: true)
            let yaml = """
                name: latency
                source: {store: s}
                sinks:
                  - type: fts
                    path: \(dir.appendingPathComponent("index.sqlite").path)
                    entities: {Post: [title, content]}
                  - type: http
                    url: \(server.url)
                checkpoint: {records: 1000, seconds: 1s}
                """
            let visible = LatencyLog()
            let stop = StopSignal()
            let service = startService(yaml: yaml, store: store, stop: stop, caughtUp: { visible.indexed(through: $0, at: ContinuousClock.now) })
            Thread.sleep(forTimeInterval: 0.5)
            let commits = try commitSinglePosts(writer)
            let storeID = writer.persistentStores[0].identifier
            Thread.sleep(forTimeInterval: 1)
            stop.request()
            join(service)
            let arrivals = server.state.withLock { $0.arrivals }
            let fts = commits.compactMap { commit in visible.time(of: commit.token).map { Self.milliseconds($0 - commit.at) } }
            let http = commits.compactMap { commit in arrivals[storeID.lowercasedString + "-\(commit.token)-0"].map { Self.milliseconds($0 - commit.at) } }
            return [
                latencyMeasurement("sink_fts_latency_p99_ms", fts, commits: commits.count, details: [("wait", "remote change notifications")]),
                latencyMeasurement("sink_http_latency_p99_ms", http, commits: commits.count, details: [("wait", "remote change notifications")]),
            ]
        }
    }

    /// One single-post commit of a latency run: its token, object and commit time.
    struct Commit {
        let token: Int64
        let objectID: ObjectID
        let at: ContinuousClock.Instant
    }

    /// Runs `yaml`'s pipeline on its own thread as `tributary run` does: after `prepare`,
    /// steps until caught up, reports the token it caught up through, and waits on the
    /// store's remote change notifications; until `stop`.
    static func startService(yaml: String, store: String, stop: StopSignal,
                             prepare: @escaping @Sendable (PipelineRunner) async throws -> Void = { _ in },
                             caughtUp: @escaping @Sendable (Int64) -> Void = { _ in }) -> Thread {
        let service = Thread {
            _ = try? blocking {
                let pipeline = try PipelineFile(yaml: yaml, path: "bench.yml", environment: [:], sinks: sinks)
                let coordinator = try TributaryBench.open(store, history: true)
                let runner = try PipelineRunner(pipeline: pipeline, coordinator: coordinator, sinks: pipeline.sinks.map { PipelineRunner.makeSink($0) })
                try await prepare(runner)
                while !stop.isRequested {
                    let target = try coordinator.currentPersistentHistoryToken()
                    while try await !runner.runOnce().caughtUp {}
                    caughtUp(target.value)
                    try await PipelineService.waitForNewCommits([coordinator], after: [target], stop: stop)
                }
                try await runner.finish()
            }
        }
        service.start()
        return service
    }

    /// `count` single-post commits by `writer`, one every 10 ms.
    static func commitSinglePosts(_ writer: PersistentStoreCoordinator, count: Int = 300) throws -> [Commit] {
        var commits: [Commit] = []
        for j in 0..<count {
            var request = BatchInsertRequest(entityName: "Post", columns: ["title", "content", "externalID", "createdAt"],
                                             rows: [[.string(Workload.title(j)), .string(Workload.content(j)), .string(Workload.externalID(j)), .date(Date())]])
            request.resultType = .objectIDs
            let id = try writer.execute(request).objectIDs[0]
            let at = ContinuousClock.now
            commits.append(Commit(token: try writer.currentPersistentHistoryToken().value, objectID: id, at: at))
            Thread.sleep(forTimeInterval: 0.01)
        }
        return commits
    }

    /// Stops `threads` (after `stop` was requested) and waits for them.
    static func join(_ threads: Thread...) {
        while threads.contains(where: { !$0.isFinished }) { Thread.sleep(forTimeInterval: 0.01) }
    }

    /// The latency measurement from the milliseconds seen for `commits` commits.
    static func latencyMeasurement(_ name: String, _ latencies: [Double], commits: Int, details: [(String, Any)] = []) -> Measurement {
        let sorted = latencies.sorted()
        return Measurement(name: name, value: sorted.isEmpty ? .infinity : NotificationBenchmarks.percentile(sorted, 0.99), unit: "ms", goal: "<= 50",
                           details: [("commits", commits), ("seen", sorted.count), ("median_ms", sorted.isEmpty ? 0 : sorted[sorted.count / 2])] + details)
    }

    static func milliseconds(_ d: Duration) -> Double { Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15 }
}

/// When each token became visible in the index (first step that covered it).
final class LatencyLog: Sendable {
    private let steps = Mutex<[(token: Int64, at: ContinuousClock.Instant)]>([])

    func indexed(through token: Int64, at instant: ContinuousClock.Instant) { steps.withLock { $0.append((token, instant)) } }

    func time(of token: Int64) -> ContinuousClock.Instant? { steps.withLock { $0.first { $0.token >= token }?.at } }
}
