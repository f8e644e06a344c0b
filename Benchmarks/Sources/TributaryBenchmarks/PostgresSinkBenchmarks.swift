import Foundation
import Tributary
import TributaryPipeline
import TributaryStreams
import TributaryTestSupport
import TributaryPostgresSink

/// The PostgreSQL sink against a real server started with `PostgresServer.start(durable: true)`
/// (fsync on): end-to-end pipeline throughput against `COPY` of the same rows into the same
/// table definition, and the latency from a commit to the row committed in PostgreSQL.
enum PostgresSinkBenchmarks {
    /// Runs `psql -c command` against `server`.
    static func psql(_ server: LocalServer, _ command: String) throws { _ = try PostgresServer.query(server, command) }

    /// Records per batch (`TRIBUTARY_BENCH_PG_BATCH`, default 1,000 as in `pipelines/postgres-mirror.yml`).
    static let batchSize = ProcessInfo.processInfo.environment["TRIBUTARY_BENCH_PG_BATCH"].flatMap { Int($0) } ?? 1_000

    static func pipelineYAML(name: String, server: LocalServer, schema: String) -> String {
        """
        name: \(name)
        source: {store: s}
        sinks:
          - type: postgres
            url: \(server.url)
            schema: \(schema)
            batch_size: \(batchSize)
        checkpoint: {records: \(max(10_000, batchSize)), seconds: 1h}
        """
    }

    /// Writes the store's posts as CSV in the mirror table's column order (not timed).
    static func writeCSV(_ store: String, to url: URL) throws -> [String] {
        let coordinator = try TributaryBench.open(store, history: true)
        let mirror = PostgresMirrorSchema(model: coordinator.persistentStores[0].model)
        let columns = mirror.tables["Post"]!.columns.map(\.name)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var buffer = ""
        try coordinator.enumerateSnapshot(entities: ["Post"], begin: { _ in }) { object in
            var values: [String: AttributeValue] = [:]
            for property in object.properties { values[property.name] = property.after }
            var fields = [String(object.objectID.primaryKey)]
            for column in columns {
                switch values[column] ?? .null {
                case .null: fields.append("")
                case .string(let text): fields.append("\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"")
                case .date(let date): fields.append(formatter.string(from: date))
                case .objectID(let object): fields.append(String(object.primaryKey))
                case let other: fields.append("\"\(other)\"")
                }
            }
            buffer += fields.joined(separator: ",") + "\n"
            if buffer.utf8.count > 1 << 20 {
                handle.write(Data(buffer.utf8))
                buffer = ""
            }
        }
        handle.write(Data(buffer.utf8))
        return [PostgresMirrorSchema.keyColumn] + columns
    }

    /// `sink_postgres_vs_bulk`: the mirror pipeline over `Workload.rows` inserted posts (history →
    /// runner → PostgreSQL sink, batches of 1,000, one transaction each) against `psql \copy` of
    /// the same rows from a CSV file into a table made by the same DDL.
    static func throughput() throws -> [Measurement] {
        let server = try PostgresServer.start(durable: true)
        defer { server.stop() }
        return try Harness.withDirectory { dir in
            let store = dir.appendingPathComponent("s.sqlite").path
            _ = try TributaryBench.insertPosts(at: store, history: true)
            let csv = dir.appendingPathComponent("posts.csv")
            let columns = try writeCSV(store, to: csv)
            let model = try TributaryBench.open(store, history: true).persistentStores[0].model
            var round = 0
            let times = try Harness.interleaved([
                {
                    round += 1
                    return try PipelineBenchmarks.runPipeline(pipelineYAML(name: "mirror\(round)", server: server, schema: "mirror\(round)"), store: store)
                },
                {
                    round += 1
                    let mirror = PostgresMirrorSchema(model: model, schema: "bulk\(round)")
                    try psql(server, mirror.createStatements().joined(separator: "; "))
                    let list = columns.map(PostgresMirrorSchema.quote).joined(separator: ", ")
                    return try Harness.time { try psql(server, "\\copy \(mirror.qualified("Post")) (\(list)) FROM '\(csv.path)' WITH (FORMAT csv)") }
                },
            ])
            return [Measurement(name: "sink_postgres_vs_bulk", value: times[1] / times[0], unit: "ratio", goal: ">= 0.5",
                                details: [("changes", Workload.rows), ("pipeline_changes_per_s", Double(Workload.rows) / times[0]),
                                          ("copy_rows_per_s", Double(Workload.rows) / times[1]), ("batch_size", batchSize), ("server", "durable (fsync on)")])]
        }
    }

    /// `sink_postgres_latency_p99_ms`: 300 single-post commits, one every 10 ms, while the
    /// pipeline runs as a service (waiting on change notifications); the time from each commit
    /// to the end of the runner step that committed its row in PostgreSQL.
    static func latency() throws -> [Measurement] {
        let server = try PostgresServer.start(durable: true)
        defer { server.stop() }
        return try Harness.withDirectory { dir in
            let store = dir.appendingPathComponent("l.sqlite").path
            let writer = try TributaryBench.open(store, history: true)
            let yaml = pipelineYAML(name: "latency", server: server, schema: "latency").replacingOccurrences(of: "seconds: 1h", with: "seconds: 1s")
            let visible = LatencyLog()
            let stop = StopSignal()
            let service = PipelineBenchmarks.startService(yaml: yaml, store: store, stop: stop, caughtUp: { visible.indexed(through: $0, at: ContinuousClock.now) })
            Thread.sleep(forTimeInterval: 0.5)
            let commits = try PipelineBenchmarks.commitSinglePosts(writer)
            Thread.sleep(forTimeInterval: 1)
            stop.request()
            PipelineBenchmarks.join(service)
            let seen = commits.compactMap { commit in visible.time(of: commit.token).map { PipelineBenchmarks.milliseconds($0 - commit.at) } }
            return [PipelineBenchmarks.latencyMeasurement("sink_postgres_latency_p99_ms", seen, commits: commits.count, details: [("server", "durable (fsync on)")])]
        }
    }
}
