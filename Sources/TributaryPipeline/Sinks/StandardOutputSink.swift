import Foundation
import Tributary
import TributaryStreams

/// Prints records as NDJSON (one record a line, in any stream format) to standard output or
/// another file descriptor. Standard output keeps no position: after a crash the records
/// since the last checkpoint are printed again, and a reader de-duplicates them by event ID.
///
/// ```swift
/// let sink = StandardOutputSink(name: "stdout", format: .cloudevents)
/// ```
public final class StandardOutputSink: Sink {
    public let name: String
    private let descriptor: Int32
    private var encoder: any RecordEncoder
    private var buffer: [UInt8] = []

    /// A sink printing `format` records to `descriptor` (standard output by default).
    public init(name: String, format: StreamFormat, descriptor: Int32 = STDOUT_FILENO) {
        self.name = name
        self.encoder = format.makeEncoder()
        self.descriptor = descriptor
    }

    public func open(_ context: SinkContext) async throws -> StreamPosition? {
        encoder.use(context.model)
        return nil
    }

    public func deliver(_ records: [StreamRecord]) async throws {
        buffer.removeAll(keepingCapacity: true)
        for record in records { encoder.encode(record, into: &buffer) }
        try writeBuffer()
    }

    /// Prints the schema record in its place.
    public func deliverSchema(_ record: SchemaRecord) async throws {
        buffer.removeAll(keepingCapacity: true)
        encoder.encodeSchema(record, into: &buffer)
        try writeBuffer()
    }

    /// Prints the capture gap record in its place.
    public func deliverGap(_ record: CaptureGapRecord) async throws {
        buffer.removeAll(keepingCapacity: true)
        encoder.encodeGap(record, into: &buffer)
        try writeBuffer()
    }

    private func writeBuffer() throws {
        try buffer.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw TributaryError(.io, "cannot write to standard output (errno \(errno))", location: "sink \(name)")
                }
                offset += written
            }
        }
    }

    public func checkpoint(through position: StreamPosition) async throws -> StreamPosition? { position }

    public func close() async throws {}
}
