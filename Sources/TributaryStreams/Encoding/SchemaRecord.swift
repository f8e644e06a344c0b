import Foundation
import Tributary

/// A schema transaction on its way into a stream or a sink (`SchemaChange`): the model
/// changed at this position, and every record after it conforms to ``change``'s model.
/// It sits at index 0 of its token, the whole of its transaction.
///
/// ```swift
/// try coordinator.enumerateHistoryChanges(request, schema: { event in
///     schemas.append(SchemaRecord(event, storeID: storeID))
/// }) { change in … }
/// ```
public struct SchemaRecord: Sendable, Equatable {
    /// Where the record sits in the stream: the schema transaction's token, index 0.
    public var position: StreamPosition
    /// The source store's ID.
    public var storeID: UUID
    /// When the schema transaction committed.
    public var timestamp: Date
    /// What changed, and the model after.
    public var change: SchemaChange
    /// The transaction's chain hash (in memory only, as for ``StreamRecord/chainHash``).
    public var chainHash: [UInt8]?

    /// A record.
    public init(position: StreamPosition, storeID: UUID, timestamp: Date, change: SchemaChange, chainHash: [UInt8]? = nil) {
        self.position = position
        self.storeID = storeID
        self.timestamp = timestamp
        self.change = change
        self.chainHash = chainHash
    }

    /// The record of a schema transaction a follower met.
    public init(_ event: SchemaChangeEvent, storeID: UUID) {
        self.init(position: StreamPosition(token: event.token.value, index: 0), storeID: storeID, timestamp: event.timestamp,
                  change: event.change, chainHash: event.chainHash)
    }

    /// The token, printed as history prints it.
    public var token: PersistentHistoryToken { PersistentHistoryToken(value: position.token, storeID: storeID) }

    /// The deterministic event ID: store ID, token and `s0` (no change record has it).
    public var eventID: String { "\(storeID.uuidString.lowercased())-\(position.token)-s0" }

    /// Writes the fields every encoding's schema record shares (inside an object):
    /// `position`, `storeID`, `token`, `timestamp`, `type: "schema"`, `fromVersion`,
    /// `toVersion`, `changes`, `detected` and `model` (the model's canonical JSON).
    func writeBody(to o: inout JSONWriter) {
        writeTransactionFields(type: "schema", to: &o)
        o.field("fromVersion", change.fromVersion.map { .string($0) } ?? .null)
        o.field("toVersion", change.toVersion)
        o.field("changes", .array(change.changes.map { .string($0) }))
        o.field("detected", .bool(change.isDetected))
        o.key("model")
        o.raw(String(decoding: change.model.canonicalJSON(), as: UTF8.self))
    }
}

extension RecordEncoder {
    /// Appends `record` as one native JSON line (an encoding without its own form of schema records).
    public mutating func encodeSchema(_ record: SchemaRecord, into buffer: inout [UInt8]) {
        record.appendNative(into: &buffer)
    }
}

extension SchemaRecord: TransactionRecord {}
