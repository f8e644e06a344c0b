import Foundation
import Tributary
import TributaryStreams

/// A declarative pipeline, read from a YAML file: a source store and its history consumer,
/// transforms applied to every record, one or more sinks, and the checkpoint, retry and
/// pruning policies. See `pipelines/README.md` for the file reference. Sink types come from a
/// ``SinkRegistry`` (``SinkRegistry/standard`` unless another is given).
///
/// ```swift
/// let pipeline = try PipelineFile(contentsOf: URL(fileURLWithPath: "pipelines/search-index.yml"))
/// print(pipeline.name, pipeline.sinks.map(\.name))
/// ```
public struct PipelineFile: Sendable {
    /// Where the pipeline's history comes from.
    public struct Source: Sendable {
        /// The store's path.
        public var store: String
        /// The history consumer keeping the pipeline's position (default: the pipeline's name).
        public var consumer: String
        /// Which history to read (entities, authors, context names, change types).
        public var filter = HistoryFilter()
        /// Start a new pipeline with a consistent snapshot of the current rows (op `r`).
        public var snapshot = false
    }

    /// What the pipeline does when the source's model changes in a way that is not additive
    /// (an attribute or entity removed or renamed, a type changed): additive changes (a new
    /// entity, attribute, relationship or index) always reach the sinks.
    public enum OnSchemaChange: String, Sendable, CaseIterable {
        /// Stop with a message naming the change and what to do (the default).
        case stop
        /// Write the schema record to each sink's dead-letter directory and go on.
        case deadLetter = "dead_letter"
        /// Hand it to the sinks, which apply what they can (a mirror drops or renames the
        /// column) and stop the pipeline naming what they cannot.
        case apply
    }

    /// What a sink does when it cannot deliver a batch.
    public enum OnError: String, Sendable, CaseIterable {
        /// Retry with capped exponential backoff and jitter until it succeeds (or `retry.max_attempts`).
        case retry
        /// Write the batch with its error to the dead-letter directory and move on.
        case deadLetter = "dead_letter"
        /// Stop the pipeline with an error (non-zero exit).
        case stop
    }

    /// One sink's settings.
    public struct SinkSettings: Sendable {
        /// The sink's name (default: its type, numbered when repeated).
        public var name: String
        /// Its `type:` in the file.
        public var type: String
        /// Its type's own settings (``SegmentsSinkSettings``, ``FullTextIndexSinkSettings``, a sink
        /// module's settings…), which make the sink.
        public var configuration: any SinkConfiguration
        /// What to do with a batch it cannot deliver.
        public var onError: OnError
        /// The dead-letter directory (required with `on_error: dead_letter`).
        public var deadLetterDirectory: String?
        /// Records per delivery.
        public var batchSize: Int
    }

    /// When the consumer is committed.
    public struct CheckpointPolicy: Sendable {
        /// After this many records…
        public var records = 1_000
        /// …or this many seconds, whichever comes first (and whenever the pipeline catches up).
        public var seconds: TimeInterval = 5
    }

    /// How transient failures are retried.
    public struct RetryPolicy: Sendable {
        /// The first wait.
        public var initial: TimeInterval = 0.1
        /// The longest wait.
        public var maximum: TimeInterval = 30
        /// Attempts before giving up (then `on_error` decides; `retry` stops); 0 for no limit.
        public var maximumAttempts = 0
    }

    /// Which history the pipeline deletes once consumed.
    public struct PrunePolicy: Sendable {
        /// Delete history older than this even if a consumer has not read it (nil: never).
        public var maximumAge: TimeInterval?
    }

    /// The file the pipeline was read from.
    public var path: String
    /// The pipeline's name (default: the file name without extension).
    public var name: String
    /// The source.
    public var source: Source
    /// The transforms, applied in order.
    public var transforms: [RecordTransform]
    /// The sinks; every record goes to each.
    public var sinks: [SinkSettings]
    /// The checkpoint policy.
    public var checkpoint = CheckpointPolicy()
    /// The retry policy.
    public var retry = RetryPolicy()
    /// The pruning policy, if the pipeline prunes.
    public var prune: PrunePolicy?
    /// What a model change that is not additive does (`on_schema_change:`).
    public var onSchemaChange = OnSchemaChange.stop
    /// Where to serve Prometheus metrics (`HOST:PORT`, or `PORT` on loopback); nil for nowhere.
    public var metricsAddress: String?
}

extension PipelineFile {
    /// Reads and checks a pipeline file, substituting `${NAME}` and `${NAME:-default}` from
    /// `environment`, with the sink types of `sinks`; the error names the file, line and key.
    public init(contentsOf url: URL, environment: [String: String] = ProcessInfo.processInfo.environment, sinks: SinkRegistry = .standard) throws {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw TributaryError(.fileNotFound, "no pipeline file", location: url.path, hint: "pass the path of a .yml file such as pipelines/search-index.yml")
        }
        try self.init(yaml: String(decoding: data, as: UTF8.self), path: url.path, environment: environment, sinks: sinks)
    }

    /// Reads and checks a pipeline from YAML text; `path` names it in errors.
    ///
    /// ```swift
    /// let pipeline = try PipelineFile(yaml: "source: {store: blog.sqlite}\nsinks: [{type: stdout}]", path: "inline.yml")
    /// ```
    public init(yaml: String, path: String, environment: [String: String] = ProcessInfo.processInfo.environment, sinks: SinkRegistry = .standard) throws {
        self = try PipelineFileReader(path: path, environment: environment, sinks: sinks).read(yaml)
    }
}
