import Foundation
import Tributary
import TributaryStreams

/// Writes records as compressed segments with a manifest, in any stream format: the same
/// directory `tributary export` writes, readable by `verify` and `replay`. The manifest's last
/// position is the durable position, so a redelivered record is skipped. Schema records
/// are written in their place, as an export writes them.
///
/// ```swift
/// let sink = SegmentsSink(name: "archive", directory: URL(fileURLWithPath: "out/archive"), format: .debezium)
/// ```
public final class SegmentsSink: Sink {
    public let name: String
    private let url: URL
    private let format: StreamFormat
    private let recordsPerSegment: Int
    private var directory: SegmentDirectory?
    private var encoder: any RecordEncoder
    private var line: [UInt8] = []
    /// The newest chain point among the records delivered since the last checkpoint.
    private var deliveredChain: StreamManifest.ChainPoint?

    /// A sink writing to `directory` in `format`, closing a segment every `recordsPerSegment` records or checkpoint.
    public init(name: String, directory: URL, format: StreamFormat, recordsPerSegment: Int = 100_000) {
        self.name = name
        self.url = directory
        self.format = format
        self.recordsPerSegment = recordsPerSegment
        self.encoder = format.makeEncoder()
    }

    public func open(_ context: SinkContext) async throws -> StreamPosition? {
        encoder.use(context.model)
        let directory = try SegmentDirectory(url: url, storeID: context.storeID, format: format, model: context.model, recordsPerSegment: recordsPerSegment)
        self.directory = directory
        return directory.durablePosition
    }

    public func deliver(_ records: [StreamRecord]) async throws {
        guard let directory else { preconditionFailure("open the sink before delivering") }
        for record in records {
            line.removeAll(keepingCapacity: true)
            encoder.encode(record, into: &line)
            try directory.append(line, position: record.position, timestamp: record.timestamp)
            if let point = StreamManifest.ChainPoint(record) { deliveredChain = point }
        }
    }

    /// Writes the schema record in its place, listed in the manifest's model versions.
    public func deliverSchema(_ record: SchemaRecord) async throws {
        guard let directory else { preconditionFailure("open the sink before delivering") }
        line.removeAll(keepingCapacity: true)
        encoder.encodeSchema(record, into: &line)
        try directory.appendSchema(line, record: record)
    }

    /// Writes the capture gap record in its place, so the stream's readers hear of it.
    public func deliverGap(_ record: CaptureGapRecord) async throws {
        guard let directory else { preconditionFailure("open the sink before delivering") }
        line.removeAll(keepingCapacity: true)
        encoder.encodeGap(record, into: &line)
        try directory.append(line, position: record.position, timestamp: record.timestamp)
    }

    public func checkpoint(through position: StreamPosition) async throws -> StreamPosition? {
        guard let directory else { return nil }
        let durable = try directory.commit(completeThrough: position.isSnapshot ? nil : position.completeToken, chain: deliveredChain)
        deliveredChain = nil
        return max(durable ?? position, position)
    }

    /// The manifest's chain point.
    public var durableChainPoint: StreamManifest.ChainPoint? { directory?.manifest.chain }

    public func close() async throws { directory = nil }
}
