import Foundation
import Tributary
import TributaryStreams

/// Writes records a sink rejected, each with the sink's name and the error (an HTTP
/// response, say), to a dead-letter segment directory, durably before the pipeline moves on.
/// Each line: `{"sink": …, "error": …, "id": eventID, "record": <native record>}`.
///
/// ```swift
/// let letters = try DeadLetterWriter(directory: URL(fileURLWithPath: "out/dead-letters"), storeID: id, model: model)
/// try letters.write(records, sink: "webhook", error: error)
/// ```
public final class DeadLetterWriter {
    private let directory: SegmentDirectory
    private var encoder = StreamFormat.native.makeEncoder()
    private var record: [UInt8] = []
    private var line = JSONWriter()

    /// Opens (or creates) the dead-letter directory.
    public init(directory: URL, storeID: UUID, model: ManagedObjectModel?) throws {
        self.directory = try SegmentDirectory(url: directory, storeID: storeID, format: .native, model: model)
        if let model { encoder.use(model) }
    }

    /// Appends the records with their error and makes them durable.
    public func write(_ records: [StreamRecord], sink: String, error: TributaryError) throws {
        for item in records {
            record.removeAll(keepingCapacity: true)
            encoder.encode(item, into: &record)
            try appendLetter(sink: sink, error: error.description, id: item.eventID, position: item.position, timestamp: item.timestamp)
        }
        try directory.commit(completeThrough: nil)
    }

    /// Appends a schema record set aside (`on_schema_change: dead_letter`), with why, and
    /// makes it durable: `{"sink": …, "error": reason, "id": eventID, "record": <native schema record>}`.
    public func writeSchema(_ item: SchemaRecord, sink: String, reason: String) throws {
        record.removeAll(keepingCapacity: true)
        encoder.encodeSchema(item, into: &record)
        try appendLetter(sink: sink, error: reason, id: item.eventID, position: item.position, timestamp: item.timestamp)
        try directory.commit(completeThrough: nil)
    }

    /// Appends one dead letter: the line encoded in `record` with its sink, error and ID.
    private func appendLetter(sink: String, error: String, id: String, position: StreamPosition, timestamp: Date) throws {
        if record.last == 0x0A { record.removeLast() }
        line.reset()
        line.object { o in
            o.field("sink", sink)
            o.field("error", error)
            o.field("id", id)
            o.key("record")
            o.raw(String(decoding: record, as: UTF8.self))
        }
        try directory.append(line.bytes + [0x0A], position: position, timestamp: timestamp)
    }

    /// Every dead letter in the directory, as text lines (for tests and inspection).
    public static func lines(in directory: URL) throws -> [String] {
        var lines: [String] = []
        guard let manifest = try StreamManifest.load(from: directory) else { return [] }
        let decoder = try ZstdFrameDecoder()
        for segment in manifest.segments {
            let reader = try SegmentReader(directory: directory, segment: segment, format: manifest.format, decoder: decoder)
            try reader.forEachRecord { bytes, _ in
                lines.append(String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .newlines))
                return true
            }
        }
        return lines
    }
}
