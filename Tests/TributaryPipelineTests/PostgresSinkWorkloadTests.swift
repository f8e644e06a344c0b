import Foundation
import Prometheus
import Synchronization
import Testing
import Tributary
import TributaryPipeline
import TributaryTestSupport
import TributaryPostgresSink

/// The PostgreSQL mirror under load and failure: 100,000 changes end with PostgreSQL's rows
/// equal to the store's; a `tributary run` killed with SIGKILL at random points and restarted
/// applies nothing twice; a server killed during a run is retried, with the lag in the
/// metrics, and caught up once it returns.
@Suite(.serialized, .timeLimit(.minutes(10)), .tags(.servers)) struct PostgresSinkWorkloadTests {
    static func pipeline(name: String, snapshot: Bool = false, batchSize: Int = 1_000, records: Int = 10_000) -> String {
        """
        name: \(name)
        source:
          store: ${TRIBUTARY_STORE}
          snapshot: \(snapshot)
        sinks:
          - type: postgres
            url: ${POSTGRES_URL}
            schema: \(name)
            batch_size: \(batchSize)
            on_error: stop
        checkpoint: {records: \(records), seconds: 1s}
        retry: {initial: 20ms, max: 200ms}
        """
    }

    static func assertMirrorEqualsStore(_ server: LocalServer, _ store: PersistentStoreCoordinator, schema: String, count: Int? = nil,
                                        sourceLocation: SourceLocation = #_sourceLocation) throws {
        try PostgresMirror.expectEqual(server, store, schema: schema, entities: ["Post"], count: count, sourceLocation: sourceLocation)
    }

    @Test func hundredThousandChangesEndWithEqualRows() async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        let dir = TemporaryDirectory()
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        // 52,000 inserts, then five rounds each updating 8,000 posts and deleting 1,600 of them: 100,000 changes.
        var ids = try PipelineFixtures.insertPosts(store, count: 52_000, perTransaction: 1_000)
        for round in 0..<5 {
            try PipelineFixtures.editPosts(store, Array(ids.prefix(8_000)), round: round)
            ids.removeFirst(8_000)
        }
        #expect(try store.historySize().changes == 100_000)
        let pipeline = try PipelineFixtures.pipeline(Self.pipeline(name: "bulk"), environment: ["TRIBUTARY_STORE": dir.path("s.sqlite"), "POSTGRES_URL": server.url])
        let runner = try PipelineRunner(pipeline: pipeline, coordinator: store, sinks: pipeline.sinks.map { PipelineRunner.makeSink($0) })
        var read = 0
        while true {
            let step = try await runner.runOnce()
            read += step.read
            if step.caughtUp { break }
        }
        try await runner.finish()
        #expect(read == 100_000)
        try Self.assertMirrorEqualsStore(server, store, schema: "bulk", count: 52_000 - 5 * 1_600)
        #expect(try PostgresMirror.checkpoint(server, schema: "bulk", pipeline: "bulk")?.hasPrefix("\(try store.currentPersistentHistoryToken().value).") == true)
    }

    @Test func killedAtRandomPointsAndRestartedAppliesNothingTwice() async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        let dir = TemporaryDirectory()
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        var ids = try PipelineFixtures.insertPosts(store, count: 3_000, perTransaction: 100)
        let environment = ["TRIBUTARY_STORE": dir.path("s.sqlite"), "POSTGRES_URL": server.url]
        let file = dir.path("crash.yml")
        try Self.pipeline(name: "crash", snapshot: true, batchSize: 200, records: 1_000).write(toFile: file, atomically: true, encoding: .utf8)
        var killedWithWorkLeft = 0
        for round in 0..<8 {
            if round > 0 {
                // The same posts' titles change every round: a stale batch applied again would leave an older title.
                ids += try PipelineFixtures.insertPosts(store, count: 400, from: 100_000 + round * 1_000, perTransaction: 50)
                var update = BatchUpdateRequest(entityName: "Post", propertiesToUpdate: ["title": .string("Round \(round)")])
                update.objectIDs = Array(ids.prefix(1_500))
                try store.execute(update)
                var delete = BatchDeleteRequest(entityName: "Post")
                delete.objectIDs = Array(ids[1_500..<1_550])
                try store.execute(delete)
                ids.removeSubrange(1_500..<1_550)
            }
            // Even rounds: killed early; odd rounds: once the mirror's checkpoint has passed a
            // random token of the first half of the round's work.
            let checkpoint: () -> Int64? = {
                (try? PostgresMirror.query(server, "SELECT token FROM crash.tributary_checkpoints WHERE pipeline = 'crash'"))?.first.flatMap { Int64($0) }
            }
            let before = checkpoint() ?? 0
            let process = try TributaryProcess.start(["run", file], environment: environment, output: dir.url.appendingPathComponent("run-\(round).log"))
            if CrashPoint.killAtRandomPoint(process, round: round, from: before, to: try store.currentPersistentHistoryToken().value, progress: checkpoint) { killedWithWorkLeft += 1 }
            #expect(process.terminationReason == .uncaughtSignal)
        }
        #expect(killedWithWorkLeft >= 3, "kills landed while the pipeline had work left (\(killedWithWorkLeft) of 8)")
        let finish = try TributaryProcess.run(["run", file, "--once"], environment: environment)
        #expect(finish.status == 0, "\(finish.stderr)")
        try Self.assertMirrorEqualsStore(server, store, schema: "crash", count: 3_000 + 7 * 350)
        let titles = try PostgresMirror.query(server, "SELECT title, count(*) FROM crash.\"Post\" WHERE title LIKE 'Round %' GROUP BY title")
        #expect(titles == ["Round 7|1500"], "every updated post holds the last round's title")
    }

    @Test func serverKilledDuringARunIsRetriedAndCaughtUpWithTheLagInTheMetrics() async throws {
        // Durable: a server without fsync and synchronous commits may lose its last commits when killed.
        let server = try PostgresServer.start(durable: true)
        defer { server.stop() }
        let dir = TemporaryDirectory()
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        let ids = try PipelineFixtures.insertPosts(store, count: 300, perTransaction: 100)
        let pipeline = try PipelineFixtures.pipeline(Self.pipeline(name: "outage", batchSize: 100), environment: ["TRIBUTARY_STORE": dir.path("s.sqlite"), "POSTGRES_URL": server.url])
        let runner = try PipelineRunner(pipeline: pipeline, coordinator: store, sinks: pipeline.sinks.map { PipelineRunner.makeSink($0) })
        let registry = PrometheusCollectorRegistry()
        runner.metrics = PipelineMetrics(pipeline: "outage", sinks: ["postgres"], factory: PrometheusMetricsFactory(registry: registry))
        while try await !runner.runOnce().caughtUp {}
        try Self.assertMirrorEqualsStore(server, store, schema: "outage", count: 300)

        server.kill()
        try PipelineFixtures.insertPosts(store, count: 400, from: 1_000, perTransaction: 100)
        try PipelineFixtures.editPosts(store, Array(ids.prefix(100)), round: 1)
        let lags = Mutex<[Double]>([])
        runner.sleep = { _ in
            let lag = PipelineMetricsTests.value(registry.emitToString(), #"tributary_pipeline_lag_changes{pipeline="outage"}"#) ?? -1
            let attempts = lags.withLock { $0.append(lag); return $0.count }
            if attempts == 3 {
                // The killed server's children leave within moments; start it again on the same port and data.
                var tries = 0
                while true {
                    try await Task.sleep(for: .milliseconds(300))
                    do { try server.restart(); break } catch { tries += 1; if tries == 5 { throw error } }
                }
            }
        }
        while try await !runner.runOnce().caughtUp {}
        try await runner.finish()
        #expect(lags.withLock { $0 }.count == 3, "retried until the server came back")
        #expect(lags.withLock { $0 }.allSatisfy { $0 == 520 }, "the lag shows while the server is down: \(lags.withLock { $0 })")
        let text = registry.emitToString()
        #expect(PipelineMetricsTests.value(text, #"tributary_pipeline_lag_changes{pipeline="outage"}"#) == 0)
        #expect(PipelineMetricsTests.value(text, #"tributary_pipeline_retries_total{pipeline="outage",sink="postgres"}"#) == 3)
        try Self.assertMirrorEqualsStore(server, store, schema: "outage", count: 700 - 20)
    }
}
