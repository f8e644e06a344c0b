import CoreMetrics
import Foundation

/// A pipeline's metrics through swift-metrics, to whatever backend the program bootstraps
/// (`tributary run` bootstraps Prometheus and serves it on the pipeline's `metrics:` address):
///
/// - `tributary_pipeline_records_total{pipeline,sink}`: records delivered
/// - `tributary_pipeline_transactions_total{pipeline,sink}`: transactions delivered (whole or in part)
/// - `tributary_pipeline_retries_total{pipeline,sink}`: failed attempts retried
/// - `tributary_pipeline_dead_letters_total{pipeline,sink}`: records written to dead letters
/// - `tributary_pipeline_checkpoints_total{pipeline}`: consumer commits
/// - `tributary_pipeline_lag_changes{pipeline}`, `tributary_pipeline_lag_seconds{pipeline}`: how far behind
/// - `tributary_sink_latency_seconds{pipeline,sink}`: time of each delivery (a histogram)
///
/// ```swift
/// let metrics = PipelineMetrics(pipeline: "search-index", sinks: ["fts"], factory: PrometheusMetricsFactory(registry: registry))
/// metrics.delivered(sink: 0, records: 100, transactions: 3, duration: .milliseconds(4))
/// ```
public struct PipelineMetrics {
    private let records: [Counter]
    private let transactions: [Counter]
    private let retries: [Counter]
    private let deadLetters: [Counter]
    private let latency: [CoreMetrics.Timer]
    private let checkpoints: Counter
    private let lagChanges: Gauge
    private let lagSeconds: Gauge

    /// The metrics of pipeline `pipeline` with sinks named `sinks`, made by `factory`
    /// (the process's bootstrapped backend by default).
    public init(pipeline: String, sinks: [String], factory: any MetricsFactory = MetricsSystem.factory) {
        func dimensions(_ sink: String) -> [(String, String)] { [("pipeline", pipeline), ("sink", sink)] }
        records = sinks.map { Counter(label: "tributary_pipeline_records_total", dimensions: dimensions($0), factory: factory) }
        transactions = sinks.map { Counter(label: "tributary_pipeline_transactions_total", dimensions: dimensions($0), factory: factory) }
        retries = sinks.map { Counter(label: "tributary_pipeline_retries_total", dimensions: dimensions($0), factory: factory) }
        deadLetters = sinks.map { Counter(label: "tributary_pipeline_dead_letters_total", dimensions: dimensions($0), factory: factory) }
        latency = sinks.map { CoreMetrics.Timer(label: "tributary_sink_latency_seconds", dimensions: dimensions($0), factory: factory) }
        checkpoints = Counter(label: "tributary_pipeline_checkpoints_total", dimensions: [("pipeline", pipeline)], factory: factory)
        lagChanges = Gauge(label: "tributary_pipeline_lag_changes", dimensions: [("pipeline", pipeline)], factory: factory)
        lagSeconds = Gauge(label: "tributary_pipeline_lag_seconds", dimensions: [("pipeline", pipeline)], factory: factory)
    }

    /// A delivery to sink number `sink` succeeded.
    public func delivered(sink: Int, records count: Int, transactions: Int, duration: Duration) {
        records[sink].increment(by: count)
        self.transactions[sink].increment(by: transactions)
        latency[sink].recordNanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }

    /// A failed attempt of sink number `sink` will be retried.
    public func retried(sink: Int) { retries[sink].increment() }

    /// Records of sink number `sink` went to the dead letters.
    public func deadLettered(sink: Int, records count: Int) { deadLetters[sink].increment(by: count) }

    /// The consumer was committed.
    public func checkpointed() { checkpoints.increment() }

    /// The pipeline's lag.
    public func lag(changes: Int, seconds: TimeInterval) {
        lagChanges.record(changes)
        lagSeconds.record(seconds)
    }
}
