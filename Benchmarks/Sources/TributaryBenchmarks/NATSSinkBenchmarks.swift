import Foundation
import Synchronization
import Tributary
import TributaryPipeline
import TributaryStreams
import TributaryTestSupport
import TributaryNATSSink

/// The NATS JetStream sink against a real nats-server (started on loopback for the run):
/// the pipeline end to end against plain asynchronous JetStream publishes of the same
/// records, and the latency from a commit to a JetStream subscriber receiving the record.
enum NATSSinkBenchmarks {
    /// Changes for `sink_nats_vs_bulk` (`TRIBUTARY_BENCH_NATS_ROWS`, default 1,000,000).
    static let rows = ProcessInfo.processInfo.environment["TRIBUTARY_BENCH_NATS_ROWS"].flatMap { Int($0) } ?? 1_000_000

    /// The pipeline's records as the sink publishes them (subject, payload, headers), kept in
    /// flat buffers so that the baseline only publishes.
    struct Encoded {
        var subjects: [String] = []
        var payload: [UInt8] = []
        var ends: [Int] = []
        var headers: [[String: String]] = []
    }

    /// Reads `store`'s history and encodes it as the sink does (native records, the sink's headers).
    static func encode(store: String, pipeline: String) throws -> Encoded {
        let settings = NATSSinkSettings(url: "nats://unused:1")
        var encoder = StreamFormat.native.makeEncoder()
        var encoded = Encoded()
        var line: [UInt8] = []
        for record in try PipelineBenchmarks.records(store: store) {
            line.removeAll(keepingCapacity: true)
            encoder.encode(record, into: &line)
            if line.last == 0x0A { line.removeLast() }
            encoded.payload += line
            encoded.ends.append(encoded.payload.count)
            encoded.subjects.append(settings.subject(for: record))
            encoded.headers.append([NATSSink.messageIDHeader: record.eventID, NATSSink.positionHeader: record.position.description,
                                    NATSSink.storeHeader: record.storeID.lowercasedString, NATSSink.pipelineHeader: pipeline, NATSSink.formatHeader: "native"])
        }
        return encoded
    }

    /// `sink_nats_vs_bulk`: the pipeline draining `rows` inserted posts into a new stream,
    /// against asynchronous publishes (256 in flight, as the sink) of the same encoded records
    /// with the same headers straight through nats.c into another new stream, interleaved.
    static func vsBulk() throws -> [Measurement] {
        let server = try NATSServer.start()
        defer { server.stop() }
        return try Harness.withDirectory { dir in
            let store = dir.appendingPathComponent("s.sqlite").path
            _ = try TributaryBench.insertPosts(at: store, rows: rows, history: true)
            let encoded = try encode(store: store, pipeline: "nats")
            let admin = try NATSConnection(url: server.url, sink: "bench")
            var round = 0
            let times = try Harness.interleaved(rounds: 2, [
                {
                    round += 1
                    let stream = "PIPELINE\(round)"
                    let seconds = try PipelineBenchmarks.runPipeline("""
                        name: nats\(round)
                        source: {store: s}
                        sinks:
                          - type: nats
                            url: \(server.url)
                            stream: \(stream)
                            subject: p\(round).{entity}
                            batch_size: 1000
                        checkpoint: {records: 10000, seconds: 1h}
                        """, store: store)
                    let published = try admin.streamInfo(stream)?.messages
                    precondition(published == UInt64(rows), "the pipeline published every change")
                    try admin.deleteStream(stream)
                    return seconds
                },
                {
                    round += 1
                    let stream = "BULK\(round)"
                    try admin.addStream(NATSStreamConfig(name: stream, subjects: ["b\(round).*"]))
                    let connection = try NATSConnection(url: server.url, sink: "bulk", maximumPending: 256)
                    let prefix = "b\(round)."
                    let seconds = try Harness.time {
                        var start = 0
                        for i in 0..<encoded.ends.count {
                            let end = encoded.ends[i]
                            let subject = prefix + encoded.subjects[i].split(separator: ".").last!
                            try connection.publishAsync(NATSMessage(subject: subject, data: Array(encoded.payload[start..<end]), headers: encoded.headers[i]))
                            start = end
                        }
                        precondition(connection.waitForAcknowledgments(timeout: 60), "every publish acknowledged")
                    }
                    let published = try admin.streamInfo(stream)?.messages
                    precondition(published == UInt64(rows), "the baseline published every change")
                    try admin.deleteStream(stream)
                    return seconds
                },
            ])
            return [Measurement(name: "sink_nats_vs_bulk", value: times[1] / times[0], unit: "ratio", goal: ">= 0.5",
                                details: [("changes", rows), ("pipeline_changes_per_s", Double(rows) / times[0]), ("bulk_publishes_per_s", Double(rows) / times[1]),
                                          ("bytes_per_record", encoded.payload.count / max(1, encoded.ends.count))])]
        }
    }

    /// `sink_nats_latency_p99_ms`: 300 single-post commits, one every 10 ms, while the pipeline
    /// runs as a service (woken by commits); the time from each commit until a JetStream pull
    /// subscriber (fetching one message at a time) receives the record.
    static func latency() throws -> [Measurement] {
        let server = try NATSServer.start()
        defer { server.stop() }
        return try Harness.withDirectory { dir in
            let store = dir.appendingPathComponent("l.sqlite").path
            let writer = try TributaryBench.open(store, history: true)
            let url = server.url
            let yaml = """
                name: latency
                source: {store: s}
                sinks:
                  - type: nats
                    url: \(url)
                    stream: LATENCY
                checkpoint: {records: 1000, seconds: 1s}
                """
            let stop = StopSignal()
            let ready = DispatchSemaphore(value: 0)
            let service = PipelineBenchmarks.startService(yaml: yaml, store: store, stop: stop, prepare: { runner in
                try await runner.checkpoint()
                ready.signal()
            })
            ready.wait()
            let arrivals = Mutex<[String: ContinuousClock.Instant]>([:])
            let subscriber = Thread {
                guard let connection = try? NATSConnection(url: url, sink: "subscriber"),
                      let subscription = try? connection.pullSubscribe(stream: "LATENCY", subject: "tributary.*", durable: "latency", maximumAckPending: 1_000, ackWait: 30)
                else { return }
                while !stop.isRequested {
                    guard let messages = try? subscription.fetch(batch: 1, timeout: 0.1) else { continue }
                    let now = ContinuousClock.now
                    for received in messages {
                        if let id = received.message.headers[NATSSink.messageIDHeader] { arrivals.withLock { $0[id] = now } }
                        try? received.acknowledge(wait: false)
                    }
                }
            }
            subscriber.start()
            Thread.sleep(forTimeInterval: 0.5)
            let commits = try PipelineBenchmarks.commitSinglePosts(writer)
            let storeID = writer.persistentStores[0].identifier
            Thread.sleep(forTimeInterval: 1)
            stop.request()
            PipelineBenchmarks.join(service, subscriber)
            let seen = arrivals.withLock { $0 }
            let latencies = commits.compactMap { commit in seen[storeID.lowercasedString + "-\(commit.token)-0"].map { PipelineBenchmarks.milliseconds($0 - commit.at) } }
            return [PipelineBenchmarks.latencyMeasurement("sink_nats_latency_p99_ms", latencies, commits: commits.count)]
        }
    }
}
