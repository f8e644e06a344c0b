import Foundation
import Tributary
import TributaryStreams

/// What a sink learns about the pipeline when it opens.
///
/// ```swift
/// let context = SinkContext(pipeline: "search-index", storeID: store.identifier, model: store.model)
/// ```
public struct SinkContext: Sendable {
    /// The pipeline's name: a sink that keeps its position downstream keys it by this.
    public var pipeline: String
    /// The source store's ID.
    public var storeID: UUID
    /// The source store's model.
    public var model: ManagedObjectModel

    /// A context.
    public init(pipeline: String, storeID: UUID, model: ManagedObjectModel) {
        self.pipeline = pipeline
        self.storeID = storeID
        self.model = model
    }
}

/// A destination of a pipeline's records. The runtime opens it, learns the position it already
/// holds durably (records at or before it are not delivered again), delivers records in
/// position order, asks it to checkpoint, and commits the history consumer only after every
/// sink has reported the records durable. Each record's `StreamRecord/eventID` is its
/// idempotence key: a sink makes redelivery after a crash harmless (by keeping its position
/// in the same transaction as its data, or by handing the key to a downstream that
/// de-duplicates), so the effect downstream is exactly once.
///
/// A sink throws `TributaryError` with code `sinkUnavailable` for a failure worth retrying
/// (connection refused, HTTP 429 or 5xx) and `sinkRejected` for records refused for good
/// (HTTP 4xx); the pipeline's `on_error` decides what happens to the latter. `pipelineStopped`
/// stops the pipeline at once, without retries (the NATS sink's stream lost records it had
/// acknowledged: delivering more would leave a gap).
///
/// ```swift
/// final class PrintSink: Sink {
///     let name = "print"
///     private var last: StreamPosition?
///     func open(_ context: SinkContext) async throws -> StreamPosition? { nil }
///     func deliver(_ records: [StreamRecord]) async throws { for r in records { print(r.eventID) }; last = records.last?.position ?? last }
///     func checkpoint(through position: StreamPosition) async throws -> StreamPosition? { position }
///     func close() async throws {}
/// }
/// ```
public protocol Sink: AnyObject {
    /// The sink's name in the pipeline (for errors, dead letters and status).
    var name: String { get }
    /// Opens the sink; returns the position of the last record it holds durably, nil for none.
    func open(_ context: SinkContext) async throws -> StreamPosition?
    /// Delivers records, in position order, all after the sink's durable position. May buffer
    /// until ``checkpoint(through:)``.
    func deliver(_ records: [StreamRecord]) async throws
    /// Makes everything delivered durable and notes that the pipeline has read through
    /// `position` (records after the last delivered one may have been filtered out); returns
    /// the sink's durable position, which must be at or after every delivered record.
    func checkpoint(through position: StreamPosition) async throws -> StreamPosition?
    /// Releases the sink's resources (after a final checkpoint).
    func close() async throws
    /// Delivers a schema record (the source's model changed), in position order with the
    /// records: every record delivered after it conforms to its model. A sink that keeps a
    /// schema (a database mirror, an index) applies the change, or throws `sinkRejected`
    /// naming what it cannot apply. The pipeline's `on_schema_change` decides which
    /// changes reach it. By default a sink ignores schema records.
    func deliverSchema(_ record: SchemaRecord) async throws
    /// Delivers a capture gap record (writes by other programs to the source may be missing
    /// before it), in position order with the records. A sink that keeps a stream (segments,
    /// standard output) writes it so its readers hear of it; by default a sink ignores it (no
    /// copy of the data can repair it; the runner warns of it).
    func deliverGap(_ record: CaptureGapRecord) async throws
    /// The newest point of the source's history chain among the records the sink holds
    /// durably: the token of a transaction it holds whole and that transaction's chain hash
    /// (the `StreamRecord.chainHash` of its last record), as ``open(_:)`` found it; nil when
    /// it holds none. The runner checks that the store still holds that hash there: a store
    /// put back from an older copy hands the sink's tokens out again, to other transactions,
    /// which the sink would skip as delivered. By default a sink keeps none.
    var durableChainPoint: StreamManifest.ChainPoint? { get }
}

extension Sink {
    /// Ignores the schema record.
    public func deliverSchema(_ record: SchemaRecord) async throws {}
    /// Ignores the capture gap record.
    public func deliverGap(_ record: CaptureGapRecord) async throws {}
    /// Keeps no chain point.
    public var durableChainPoint: StreamManifest.ChainPoint? { nil }
}

extension TributaryError {
    /// A failure worth retrying, from sink `sink`.
    ///
    /// ```swift
    /// throw TributaryError.sinkUnavailable("http", "HTTP 503 from the endpoint")
    /// ```
    public static func sinkUnavailable(_ sink: String, _ message: String, hint: String? = nil) -> TributaryError {
        TributaryError(.sinkUnavailable, message, location: "sink \(sink)", hint: hint)
    }

    /// Records refused for good by sink `sink`; `message` carries the response.
    ///
    /// ```swift
    /// throw TributaryError.sinkRejected("http", "HTTP 400: bad field")
    /// ```
    public static func sinkRejected(_ sink: String, _ message: String, hint: String? = nil) -> TributaryError {
        TributaryError(.sinkRejected, message, location: "sink \(sink)", hint: hint)
    }
}
