import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Prometheus
import Synchronization
import Testing
import Tributary
import TributaryPipeline

/// Metrics: records, transactions, retries, dead letters, checkpoints, lag (visible while an
/// endpoint is down) and sink latency, served as Prometheus text.
@Suite struct PipelineMetricsTests {
    /// The value of the sample line starting with `prefix` in Prometheus text.
    static func value(_ text: String, _ prefix: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(prefix + " ") }.flatMap { Double($0.split(separator: " ").last!) }
    }

    @Test func countsDeliveriesRetriesCheckpointsAndShowsLagWhileTheEndpointIsDown() async throws {
        let dir = TemporaryDirectory()
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        try PipelineFixtures.insertPosts(store, count: 30, perTransaction: 10)
        let server = try TestHTTPServer()
        defer { server.stop() }
        server.state.withLock { $0.unavailableLeft = 3 }
        let pipeline = try PipelineFixtures.pipeline("name: hook\nsource: {store: s}\nsinks:\n  - type: http\n    url: \(server.url)\n    batch_size: 10\n")
        let runner = try PipelineRunner(pipeline: pipeline, coordinator: store, sinks: pipeline.sinks.map { PipelineRunner.makeSink($0) })
        let registry = PrometheusCollectorRegistry()
        runner.metrics = PipelineMetrics(pipeline: "hook", sinks: ["http"], factory: PrometheusMetricsFactory(registry: registry))
        let lagsWhileDown = Mutex<[Double]>([])
        runner.sleep = { _ in
            let lag = Self.value(registry.emitToString(), #"tributary_pipeline_lag_changes{pipeline="hook"}"#) ?? -1
            lagsWhileDown.withLock { $0.append(lag) }
        }
        while try await !runner.runOnce().caughtUp {}
        try await runner.finish()
        #expect(lagsWhileDown.withLock { $0 } == [30, 30, 30], "the lag shows in the metrics while the endpoint answers 503")
        let text = registry.emitToString()
        #expect(Self.value(text, #"tributary_pipeline_records_total{pipeline="hook",sink="http"}"#) == 30)
        #expect(Self.value(text, #"tributary_pipeline_transactions_total{pipeline="hook",sink="http"}"#) == 3)
        #expect(Self.value(text, #"tributary_pipeline_retries_total{pipeline="hook",sink="http"}"#) == 3)
        #expect(Self.value(text, #"tributary_pipeline_checkpoints_total{pipeline="hook"}"#) == 1)
        #expect(Self.value(text, #"tributary_pipeline_lag_changes{pipeline="hook"}"#) == 0)
        #expect(Self.value(text, #"tributary_sink_latency_seconds_count{pipeline="hook",sink="http"}"#) == 3)
    }

    @Test func deadLettersAreCounted() async throws {
        let dir = TemporaryDirectory()
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        try PipelineFixtures.insertPosts(store, count: 7)
        let server = try TestHTTPServer()
        defer { server.stop() }
        server.state.withLock { $0.rejectAll = true }
        let pipeline = try PipelineFixtures.pipeline("name: hook\nsource: {store: s}\nsinks:\n  - type: http\n    url: \(server.url)\n    on_error: dead_letter\n    dead_letter: \(dir.path("dead"))\n")
        let runner = try PipelineRunner(pipeline: pipeline, coordinator: store, sinks: pipeline.sinks.map { PipelineRunner.makeSink($0) })
        let registry = PrometheusCollectorRegistry()
        runner.metrics = PipelineMetrics(pipeline: "hook", sinks: ["http"], factory: PrometheusMetricsFactory(registry: registry))
        while try await !runner.runOnce().caughtUp {}
        try await runner.finish()
        #expect(Self.value(registry.emitToString(), #"tributary_pipeline_dead_letters_total{pipeline="hook",sink="http"}"#) == 7)
    }
}
