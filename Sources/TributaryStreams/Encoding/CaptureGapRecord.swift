import Foundation
import Tributary

/// A capture gap on its way into a stream or a sink (`CaptureGapEvent`): writes by other
/// programs to the source may be missing before this position, and ``description`` says
/// which and why. It sits at index 0 of its token, the whole of its transaction. Native
/// streams carry it as `"type":"captureGap"`, CloudEvents as `tributary.captureGap`, and
/// Debezium as a record of Tributary's own fields with `source` and `ts_ms` but no `op` (a
/// Debezium consumer that reads change events passes over it). `tributary verify` reports it;
/// replay passes over it (a replica cannot repair it).
///
/// ```swift
/// try follower.readChanges(after: after, through: head, gaps: { event in
///     encoder.encodeGap(CaptureGapRecord(event, storeID: storeID), into: &buffer)
/// }) { view in … }
/// ```
public struct CaptureGapRecord: Sendable, Equatable {
    /// Where the record sits in the stream: the gap transaction's token, index 0.
    public var position: StreamPosition
    /// The source store's ID.
    public var storeID: UUID
    /// When the gap was found.
    public var timestamp: Date
    /// Which writes may be missing, since which token, and why.
    public var description: String
    /// The entities whose writes may be missing (empty when the gap is about tables outside the model).
    public var entities: [String]
    /// The transaction's chain hash (in memory only, as for ``StreamRecord/chainHash``).
    public var chainHash: [UInt8]?

    /// A record.
    public init(position: StreamPosition, storeID: UUID, timestamp: Date, description: String, entities: [String] = [], chainHash: [UInt8]? = nil) {
        self.position = position
        self.storeID = storeID
        self.timestamp = timestamp
        self.description = description
        self.entities = entities
        self.chainHash = chainHash
    }

    /// The record of a capture gap a follower met.
    public init(_ event: CaptureGapEvent, storeID: UUID) {
        self.init(position: StreamPosition(token: event.token.value, index: 0), storeID: storeID, timestamp: event.timestamp,
                  description: event.description, entities: event.entities, chainHash: event.chainHash)
    }

    /// The token, printed as history prints it.
    public var token: PersistentHistoryToken { PersistentHistoryToken(value: position.token, storeID: storeID) }

    /// The deterministic event ID: store ID, token and `g0` (no other record has it).
    public var eventID: String { "\(storeID.uuidString.lowercased())-\(position.token)-g0" }

    /// One line for people: where, and what may be missing.
    public var summary: String { "capture gap at \(position): \(description)" }

    /// Writes the fields every encoding's gap record shares (inside an object): `position`,
    /// `storeID`, `token`, `timestamp`, `type: "captureGap"`, `description` and `entities`.
    func writeBody(to o: inout JSONWriter) {
        writeTransactionFields(type: Self.type, to: &o)
        o.field("description", description)
        o.field("entities", .array(entities.map { .string($0) }))
    }

    /// The native record's `type`.
    static let type = "captureGap"
}

extension RecordEncoder {
    /// Appends `record` as one native JSON line (an encoding without its own form of gap records).
    public mutating func encodeGap(_ record: CaptureGapRecord, into buffer: inout [UInt8]) {
        record.appendNative(into: &buffer)
    }
}

extension CaptureGapRecord: TransactionRecord {}

extension CloudEventsEncoder {
    /// A gap record as the event `tributary.captureGap`, subject the store, with the native
    /// gap record as `data`.
    public mutating func encodeGap(_ record: CaptureGapRecord, into buffer: inout [UInt8]) {
        record.appendCloudEvent(type: "tributary.\(CaptureGapRecord.type)", into: &buffer)
    }
}

extension DebeziumEncoder {
    /// A gap record in Debezium's stream: Debezium has no event for writes a connector may
    /// have missed, so it is the `source` block and `ts_ms` of its events followed by
    /// Tributary's own fields, without `op`, `before` or `after`.
    public mutating func encodeGap(_ record: CaptureGapRecord, into buffer: inout [UInt8]) {
        let exportTime = exportTime()
        var json = JSONWriter()
        json.object { o in
            DebeziumSchemaChange.writeTransactionSource(to: &o, timestamp: record.timestamp, token: record.token, store: record.storeID.uuidString.lowercased(),
                                                        exportTime: exportTime)
            record.writeBody(to: &o)
        }
        buffer.append(contentsOf: json.bytes)
        buffer.append(0x0A)
    }
}
