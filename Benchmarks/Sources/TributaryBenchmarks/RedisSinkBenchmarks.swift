import Foundation
import Synchronization
import Tributary
import TributaryPipeline
import TributaryStreams
import TributaryTestSupport
import TributaryRedisSink

/// The Redis sink end to end (history → runner → Lua compare-and-set) against pipelined
/// `HSET`s of the same data straight to the same server, and the latency from a commit to
/// the value visible in Redis (its invalidation message received by a subscriber).
enum RedisSinkBenchmarks {
    /// 1,000,000, or `TRIBUTARY_BENCH_REDIS_ROWS`.
    static let rows = ProcessInfo.processInfo.environment["TRIBUTARY_BENCH_REDIS_ROWS"].flatMap { Int($0) } ?? 1_000_000

    /// `sink_redis_vs_bulk`: the cache pipeline over `rows` inserted posts (batches of 1,000,
    /// 200 records per script call, all of a batch in one round trip) against pipelined
    /// `HSET key _position P title … content … externalID … createdAt … updatedAt …` of the
    /// same values (formatted and encoded the sink's way, ``RedisArguments``), 1,000 commands
    /// per round trip. Redis is flushed before each side.
    static func vsBulk() throws -> [Measurement] {
        try Harness.withDirectory { dir in
            let store = dir.appendingPathComponent("s.sqlite").path
            _ = try TributaryBench.insertPosts(at: store, rows: rows, history: true)
            let redis = try RedisServer.start()
            defer { redis.stop() }
            let admin = try RedisConnection(url: URL(string: redis.url)!, password: nil, timeout: 60, sink: "bench")
            let updatedAt = ISO8601.string(from: Date())
            var round = 0
            let times = try Harness.interleaved(rounds: 2, [
                {
                    round += 1
                    _ = try admin.command(["FLUSHALL"])
                    let seconds = try PipelineBenchmarks.runPipeline("""
                        name: redis\(round)
                        source: {store: s}
                        sinks:
                          - type: redis
                            url: \(redis.url)
                            batch_size: 1000
                        checkpoint: {records: 10000, seconds: 1h}
                        """, store: store)
                    guard case .integer(let keys) = try admin.command(["DBSIZE"]), keys == Int64(rows) + 1 else {
                        throw TributaryError(.invalidInput, "the pipeline left the wrong number of keys in Redis")
                    }
                    return seconds
                },
                {
                    _ = try admin.command(["FLUSHALL"])
                    let connection = try RedisConnection(url: URL(string: redis.url)!, password: nil, timeout: 60, sink: "bench")
                    var arguments = RedisArguments()
                    return try Harness.time {
                        var j = 0
                        while j < rows {
                            let end = min(rows, j + 1_000)
                            for k in j..<end {
                                arguments.removeAll()
                                for text in ["Post:\(k + 1)", "_position", "\(k / 1_000 + 1).\(k % 1_000)", "title", Workload.title(k), "content", Workload.content(k),
                                             "externalID", Workload.externalID(k), "createdAt", ISO8601.string(from: Date(timeIntervalSince1970: Workload.createdAt(k))),
                                             "updatedAt", updatedAt] { arguments.add(text) }
                                connection.append(arguments, after: ["HSET"])
                            }
                            for _ in j..<end { _ = try connection.reply() }
                            j = end
                        }
                    }
                },
            ])
            return [Measurement(name: "sink_redis_vs_bulk", value: times[1] / times[0], unit: "ratio", goal: ">= 0.5",
                                details: [("changes", rows), ("pipeline_changes_per_s", Double(rows) / times[0]), ("bulk_hsets_per_s", Double(rows) / times[1])])]
        }
    }

    /// `sink_redis_latency_p99_ms`: 300 single-post commits, one every 10 ms, while the pipeline
    /// runs as a service (woken by the store's commit notifications); the time from each commit
    /// to its key's invalidation message, which the script publishes right after writing it.
    static func latency() throws -> [Measurement] {
        try Harness.withDirectory { dir in
            let redis = try RedisServer.start()
            defer { redis.stop() }
            let store = dir.appendingPathComponent("l.sqlite").path
            let writer = try TributaryBench.open(store, history: true)
            let yaml = """
                name: latency
                source: {store: s}
                sinks:
                  - type: redis
                    url: \(redis.url)
                    channel: bench
                checkpoint: {records: 1000, seconds: 1s}
                """
            let arrivals = Mutex<[String: ContinuousClock.Instant]>([:])
            let subscriber = try RedisConnection(url: URL(string: redis.url)!, password: nil, timeout: 60, sink: "bench")
            _ = try subscriber.command(["SUBSCRIBE", "bench"])
            let stop = StopSignal()
            nonisolated(unsafe) let listening = subscriber
            let listener = Thread {
                while !stop.isRequested {
                    guard case .array(let message) = try? listening.reply() else {
                        if listening.isOpen { continue } else { break }
                    }
                    let at = ContinuousClock.now
                    if message.count == 3, let key = message[2].text { arrivals.withLock { if $0[key] == nil { $0[key] = at } } }
                }
            }
            listener.start()
            let service = PipelineBenchmarks.startService(yaml: yaml, store: store, stop: stop)
            Thread.sleep(forTimeInterval: 0.5)
            let commits = try PipelineBenchmarks.commitSinglePosts(writer)
            Thread.sleep(forTimeInterval: 1)
            stop.request()
            _ = try RedisConnection(url: URL(string: redis.url)!, password: nil, sink: "bench").command(["PUBLISH", "bench", "stop"])
            PipelineBenchmarks.join(service, listener)
            let seen = arrivals.withLock { $0 }
            let latencies = commits.compactMap { commit in seen["Post:\(commit.objectID.primaryKey)"].map { PipelineBenchmarks.milliseconds($0 - commit.at) } }
            return [PipelineBenchmarks.latencyMeasurement("sink_redis_latency_p99_ms", latencies, commits: commits.count, details: [("wait", "commit notifications")])]
        }
    }
}
