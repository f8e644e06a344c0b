import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Prometheus
import Synchronization
import Testing
import Tributary
import TributaryPipeline
import TributaryStreams
import TributaryTestSupport
import TributaryNATSSink

/// The NATS JetStream sink against a real nats-server: the shared sink suite; a `tributary
/// run` of pipelines/nats-fanout.yml killed at random points and restarted (once after the
/// duplicate window has passed) leaves each change in the stream exactly once; a server
/// stopped during a run is retried, with the lag in the metrics, and caught up when it returns.
@Suite(.serialized, .timeLimit(.minutes(10)), .tags(.servers)) struct NATSSinkTests {
    /// Every message of `stream`, in stream order, read through a new durable consumer; schema
    /// messages (the model a pipeline's messages start with) left out unless `schema`.
    static func messages(_ url: String, stream: String, schema: Bool = false) throws -> [NATSMessage] {
        let connection = try NATSConnection(url: url, sink: "audit")
        guard let info = try connection.streamInfo(stream), info.messages > 0 else { return [] }
        let subscription = try connection.pullSubscribe(stream: stream, subject: info.config.subjects[0], durable: "audit-\(UUID().uuidString.prefix(8))",
                                                        maximumAckPending: 1_000_000, ackWait: 60)
        var all: [NATSMessage] = []
        while UInt64(all.count) < info.messages {
            let batch = try subscription.fetch(batch: 2_000, timeout: 2)
            guard let last = batch.last else { break }
            all += batch.map(\.message)
            for message in batch.dropLast() { try message.acknowledge(wait: false) }
            try last.acknowledge()
        }
        return all.filter { schema || $0.headers[NATSSink.schemaHeader] == nil }
    }

    /// Checks that `messages` hold each event ID once; returns the IDs.
    static func distinctIDs(_ messages: [NATSMessage]) -> Set<String> {
        Set(messages.compactMap { $0.headers[NATSSink.messageIDHeader] })
    }

    @Test func passesTheSharedSinkSuite() async throws {
        let server = try NATSServer.start()
        defer { server.stop() }
        func underTest(_ name: String) -> SinkUnderTest {
            let settings = NATSSinkSettings(url: server.url, stream: name.uppercased(), subject: "\(name).{entity}.{op}", maximumPending: 3)
            return SinkUnderTest(make: { NATSSink(name: "nats", settings: settings) }, effect: {
                let messages = try Self.messages(server.url, stream: settings.stream)
                #expect(Self.distinctIDs(messages).count == messages.count, "no event ID twice in the stream")
                #expect(messages.allSatisfy { $0.subject.hasPrefix(name + ".Post.") })
                return messages.map { "\($0.headers[NATSSink.messageIDHeader] ?? "") \($0.headers[NATSSink.positionHeader] ?? "") \(String(decoding: $0.data, as: UTF8.self))" }
            })
        }
        try await SinkSuite.run(clean: underTest("clean"), crashed: underTest("crashed"))
        let messages = try Self.messages(server.url, stream: "CRASHED")
        #expect(messages.map(\.subject).first == "crashed.Post.c")
        // The stream starts with the model: one schema message, before the first change.
        let all = try Self.messages(server.url, stream: "CRASHED", schema: true)
        #expect(all.map(\.subject).prefix(2) == ["crashed._schema.s", "crashed.Post.c"] && all.count == messages.count + 1)
        #expect(all.first?.headers[NATSSink.schemaHeader] == "1")
        #expect(Self.distinctIDs(messages) == Set(SinkSuite.records.map(\.eventID)))
    }

    @Test func pipelineFileIsCheckedWithClearErrors() throws {
        let base = "source: {store: s}\nsinks:\n  - type: nats\n"
        let good = try PipelineFixtures.pipeline(base + "    url: nats://127.0.0.1:4222\n    subject: cdc.{store}.{entity}.{op}\n    duplicate_window: 2s\n    retention: interest\n")
        let settings = try #require(good.sinks[0].configuration as? NATSSinkSettings)
        #expect(settings.streamSubject == "cdc.*.*.*")
        #expect(settings.duplicateWindow == 2)
        #expect(settings.retention == .interest)
        for (yaml, fragment) in [("    url: http://x:1\n", "nats:// URL"), ("    url: nats://a:1\n    subject: a.{table}\n", "unknown placeholder"),
                                 ("    url: nats://a:1\n    subject: a..b\n", "empty token"), ("    url: nats://a:1\n    retention: forever\n", "unknown retention"),
                                 ("    stream: S\n", "needs url"), ("    url: nats://a:1\n    password: x\n", "credentials")] {
            #expect(throws: TributaryError.self) { try PipelineFixtures.pipeline(base + yaml) }
            do { _ = try PipelineFixtures.pipeline(base + yaml) } catch let error as TributaryError {
                #expect(error.message.contains(fragment), "\(error.message)")
                #expect(error.location?.hasPrefix("test.yml:") == true)
            }
        }
    }

    @Test func killedAtRandomPointsAndRestartedLeavesEachChangeOnceInTheStream() async throws {
        let dir = TemporaryDirectory()
        let server = try NATSServer.start()
        defer { server.stop() }
        // 100,000 changes: 84,000 inserts, then ten rounds of 1,000 inserts, 500 updates and 100
        // deletes, each arriving before a run of pipelines/nats-fanout.yml killed at a random
        // point; twice the restart waits out the (shortened) duplicate window first.
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        var ids = try PipelineFixtures.insertPosts(store, count: 84_000, perTransaction: 1_000)
        let file = PipelineFixtures.repositoryRoot.appendingPathComponent("pipelines/nats-fanout.yml").path
        let environment = ["TRIBUTARY_STORE": dir.path("s.sqlite"), "NATS_URL": server.url, "NATS_STREAM": "FANOUT", "NATS_DUPLICATE_WINDOW": "1s"]
        var killedWithWorkLeft = 0
        let watcher = try NATSConnection(url: server.url, sink: "test")
        for round in 0..<10 {
            ids += try PipelineFixtures.insertPosts(store, count: 1_000, from: 100_000 + round * 1_000, perTransaction: 100)
            try PipelineFixtures.editPosts(store, Array(ids.prefix(500)), round: round)
            ids.removeFirst(500)
            if round == 3 || round == 7 { try await Task.sleep(for: .milliseconds(1_500)) }
            // Even rounds: killed early (while it starts); odd rounds: once the stream has grown by a random part of the round's work.
            let before = Int64(try watcher.streamInfo("FANOUT")?.messages ?? 0)
            let process = try TributaryProcess.start(["run", file], environment: environment, output: dir.url.appendingPathComponent("run-\(round).log"))
            if CrashPoint.killAtRandomPoint(process, round: round, from: before, to: Int64(try store.historySize().changes), progress: { (try? watcher.streamInfo("FANOUT")).map { Int64($0?.messages ?? 0) } }) { killedWithWorkLeft += 1 }
            #expect(process.terminationReason == .uncaughtSignal)
        }
        #expect(killedWithWorkLeft >= 3, "kills landed while the pipeline had work left (\(killedWithWorkLeft) of 10)")
        try await Task.sleep(for: .milliseconds(1_500))
        let finish = try TributaryProcess.run(["run", file, "--once"], environment: environment)
        #expect(finish.status == 0, "\(finish.stderr)")
        let changes = try store.historySize().changes
        #expect(changes == 100_000)
        let messages = try Self.messages(server.url, stream: "FANOUT")
        #expect(messages.count == changes, "the stream holds each change once")
        #expect(Self.distinctIDs(messages).count == changes, "no event ID twice")
        #expect(Set(messages.map { $0.subject.split(separator: ".").last! }) == ["c", "u", "d"])
    }

    /// The Prometheus text a running pipeline serves, nil when it does not answer.
    static func scrape(_ port: Int) async -> String? {
        guard let (data, _) = try? await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/metrics")!) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    @Test func serverKilledUnderARunningPipelineIsCaughtUpWhenItReturns() async throws {
        let dir = TemporaryDirectory()
        let server = try NATSServer.start()
        defer { server.stop() }
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        try PipelineFixtures.insertPosts(store, count: 10_000, perTransaction: 100)
        let metricsPort = try FreePort.next()
        let file = dir.path("p.yml")
        try """
            name: live
            source: {store: \(dir.path("s.sqlite"))}
            sinks:
              - type: nats
                url: \(server.url)
                stream: LIVE
                timeout: 1s
                batch_size: 200
            checkpoint: {records: 1000, seconds: 1s}
            retry: {initial: 50ms, max: 500ms}
            metrics: \(metricsPort)
            """.write(toFile: file, atomically: true, encoding: .utf8)
        let process = try TributaryProcess.start(["run", file], environment: [:], output: dir.url.appendingPathComponent("run.log"))
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let connection = try NATSConnection(url: server.url, sink: "watch")
        var deadline = Date().addingTimeInterval(30)
        while (try? connection.streamInfo("LIVE")?.messages ?? 0) ?? 0 < 500, Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
        // Killed while the pipeline publishes; more changes arrive while it is away.
        server.kill()
        try PipelineFixtures.insertPosts(store, count: 2_000, from: 50_000, perTransaction: 100)
        // Down for 3 s, longer than the sink's 1 s timeout: publishes and checkpoints fail and are retried.
        var lagWhileDown = 0.0
        deadline = Date().addingTimeInterval(3)
        while Date() < deadline {
            if let text = await Self.scrape(metricsPort) { lagWhileDown = PipelineMetricsTests.value(text, #"tributary_pipeline_lag_changes{pipeline="live"}"#) ?? 0 }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(lagWhileDown >= 2_000, "the lag shows in the metrics while the server is down")
        try server.restart()
        deadline = Date().addingTimeInterval(60)
        while (try? store.historyConsumer(named: "live").lagTransactions) ?? 1 > 0, Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        let log = (try? String(contentsOfFile: dir.path("run.log"), encoding: .utf8)) ?? ""
        #expect(process.terminationStatus == 0, "\(log.suffix(2_000))")
        #expect(log.contains("failed"), "deliveries failed while the server was away and were retried: \(log.suffix(3_000))")
        let text = await Self.scrape(metricsPort)
        #expect(text == nil, "the process has exited")
        let messages = try Self.messages(server.url, stream: "LIVE")
        #expect(messages.count == 12_000, "the stream holds each change once")
        #expect(Self.distinctIDs(messages).count == 12_000)
    }

    @Test func serverStoppedDuringARunIsRetriedAndCaughtUpWithTheLagInTheMetrics() async throws {
        let dir = TemporaryDirectory()
        let server = try NATSServer.start()
        defer { server.stop() }
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        try PipelineFixtures.insertPosts(store, count: 300, perTransaction: 100)
        let pipeline = try PipelineFixtures.pipeline("""
            name: outage
            source: {store: s}
            sinks:
              - type: nats
                url: \(server.url)
                stream: OUTAGE
                timeout: 500ms
                batch_size: 100
            checkpoint: {records: 100}
            """)
        let runner = try PipelineRunner(pipeline: pipeline, coordinator: store, sinks: pipeline.sinks.map { PipelineRunner.makeSink($0) })
        let registry = PrometheusCollectorRegistry()
        runner.metrics = PipelineMetrics(pipeline: "outage", sinks: ["nats"], factory: PrometheusMetricsFactory(registry: registry))
        let lags = Mutex<[Double]>([])
        runner.sleep = { _ in
            let lag = PipelineMetricsTests.value(registry.emitToString(), #"tributary_pipeline_lag_changes{pipeline="outage"}"#) ?? -1
            let count = lags.withLock { $0.append(lag); return $0.count }
            if count == 3 { try server.restart() }
            try await Task.sleep(for: .milliseconds(50))
        }
        let first = try await runner.runOnce()
        #expect(first.delivered == 100 && first.checkpointed)
        server.terminate()
        try PipelineFixtures.insertPosts(store, count: 200, from: 1_000, perTransaction: 100)
        while try await !runner.runOnce().caughtUp {}
        try await runner.finish()
        let seen = lags.withLock { $0 }
        #expect(seen.count >= 3, "deliveries failed while the server was down and were retried")
        #expect(seen.prefix(3).allSatisfy { $0 >= 200 }, "the lag shows in the metrics while the server is down: \(seen)")
        let text = registry.emitToString()
        #expect(PipelineMetricsTests.value(text, #"tributary_pipeline_lag_changes{pipeline="outage"}"#) == 0)
        #expect((PipelineMetricsTests.value(text, #"tributary_pipeline_retries_total{pipeline="outage",sink="nats"}"#) ?? 0) >= 3)
        let messages = try Self.messages(server.url, stream: "OUTAGE")
        #expect(messages.count == 500)
        #expect(Self.distinctIDs(messages).count == 500)
    }
}
