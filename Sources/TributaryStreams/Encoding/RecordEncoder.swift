import Foundation
import Tributary

/// Turns stream records into NDJSON lines, appended to a byte buffer (each line ends with `\n`).
/// Encoders keep a little state (Debezium counts changes per entity in a transaction), so
/// one encoder writes one stream, in position order.
///
/// ```swift
/// var encoder = StreamFormat.native.makeEncoder()
/// var bytes: [UInt8] = []
/// encoder.encode(record, into: &bytes)
/// ```
public protocol RecordEncoder {
    /// Appends `record` as one JSON line to `buffer`.
    mutating func encode(_ record: StreamRecord, into buffer: inout [UInt8])
    /// Appends the schema record `record` as one JSON line to `buffer` (by default, the
    /// native form: ``SchemaRecord``'s fields with `"type":"schema"`).
    mutating func encodeSchema(_ record: SchemaRecord, into buffer: inout [UInt8])
    /// Appends the capture gap record `record` as one JSON line to `buffer` (by default, the
    /// native form: ``CaptureGapRecord``'s fields with `"type":"captureGap"`).
    mutating func encodeGap(_ record: CaptureGapRecord, into buffer: inout [UInt8])
    /// Takes `model` as the source's model from here on, for what an encoding writes by it: a
    /// blob in an attribute that is not binary is written `{"base64":"…"}`, apart from text (a
    /// schema record's model is taken as it is encoded). By default, nothing.
    mutating func use(_ model: ManagedObjectModel)
}

extension RecordEncoder {
    public mutating func use(_ model: ManagedObjectModel) {}
}

/// The record encodings a stream can use.
///
/// ```swift
/// let format = try StreamFormat(parsing: "debezium")
/// ```
public enum StreamFormat: String, Sendable, Codable, CaseIterable {
    /// Tributary's own JSON: the `history --json` change record, one change a line,
    /// with `storeID` and `position`.
    case native
    /// Debezium's change-event envelope (`before`, `after`, `op`, `source`, `ts_ms`, `transaction`).
    case debezium
    /// CloudEvents 1.0 structured JSON, with the native record as `data`.
    case cloudevents

    /// Parses a format name, with an error listing the names there are.
    public init(parsing text: String) throws {
        guard let format = StreamFormat(rawValue: text.lowercased()) else {
            throw TributaryError(.invalidInput, "unknown format '\(text)'", location: "--format", hint: "use native, debezium or cloudevents")
        }
        self = format
    }

    /// A new encoder for this format; `clock` gives the export time Debezium records carry.
    public func makeEncoder(clock: @escaping @Sendable () -> Date = { Date() }) -> any RecordEncoder {
        switch self {
        case .native: return NativeEncoder()
        case .debezium: return DebeziumEncoder(clock: clock)
        case .cloudevents: return CloudEventsEncoder()
        }
    }
}

/// The fields every encoding shares: what happened to which object, with values.
enum RecordBody {
    /// Writes `entity`, `objectID`, `type`, `movedFrom` or `movedTo` when set, `key` when the
    /// table declares one (``StreamRecord/key``), then `after` and
    /// `relationships` (insert, read), `updatedProperties` (update) or `before` (delete), and
    /// `excluded`, as `history --json` does, with blobs in attributes that are not binary
    /// marked by `marking`.
    static func write(_ record: StreamRecord, texts: inout RecordTexts, marking: BlobMarking, to o: inout JSONWriter) {
        o.field("entity", record.entityName)
        o.field("objectID", texts.uri(record.objectID))
        o.field("type", record.operation.name)
        PersistentHistoryChange.writeMove(movedFrom: record.movedFrom, movedTo: record.movedTo, to: &o)
        let marked = marking.names(of: record.modelEntityName)
        PersistentHistoryChange.writeKey(record.key, blobsMarked: marked, to: &o)
        let type: PersistentHistoryChangeType
        switch record.operation {
        case .create, .read: type = .insert
        case .update: type = .update
        case .delete: type = .delete
        }
        PersistentHistoryChange.writeValues(record.properties, of: type, omittingExcludedValues: true, blobsMarked: marked, to: &o)
    }

    /// Writes the transaction's fields: token, index, timestamp, author, context name, and
    /// the reason when the writer gave one.
    static func writeTransaction(_ record: StreamRecord, texts: RecordTexts, to o: inout JSONWriter) {
        o.field("token", texts.token)
        o.field("index", .integer(Int64(record.position.index)))
        o.field("timestamp", texts.timestamp)
        o.field("author", record.author.map { .string($0) } ?? .null)
        o.field("contextName", record.contextName.map { .string($0) } ?? .null)
        if let reason = record.reason { o.field("reason", reason) }
    }

    /// Milliseconds since 1970.
    static func milliseconds(_ date: Date) -> Int64 { Int64(saturating: (date.timeIntervalSince1970 * 1000).rounded()) }
}
