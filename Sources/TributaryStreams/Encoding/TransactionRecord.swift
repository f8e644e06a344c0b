import Foundation
import Tributary

/// A record that is the whole of its transaction and about the store, not an object (a
/// ``SchemaRecord``, a ``CaptureGapRecord``): every encoding writes its fields alike.
protocol TransactionRecord {
    /// Where it sits in the stream: its token, index 0.
    var position: StreamPosition { get }
    /// Its token, printed as history prints it.
    var token: PersistentHistoryToken { get }
    /// The source store's ID.
    var storeID: UUID { get }
    /// When its transaction committed.
    var timestamp: Date { get }
    /// Its deterministic event ID.
    var eventID: String { get }
    /// Writes its fields (inside an object), `type` among them.
    func writeBody(to o: inout JSONWriter)
}

extension TransactionRecord {
    /// Writes the fields it shares with every record of a whole transaction: `position`,
    /// `storeID`, `token`, `timestamp` and `type`.
    func writeTransactionFields(type: String, to o: inout JSONWriter) {
        o.field("position", position.description)
        o.field("storeID", storeID.uuidString.lowercased())
        o.field("token", token.description)
        o.field("timestamp", ISO8601.string(from: timestamp))
        o.field("type", type)
    }

    /// Appends the native line: ``writeBody(to:)`` in one object, then a newline.
    func appendNative(into buffer: inout [UInt8]) {
        var json = JSONWriter()
        json.object { o in writeBody(to: &o) }
        buffer.append(contentsOf: json.bytes)
        buffer.append(0x0A)
    }

    /// Appends the CloudEvent `type`, subject the store, with the native record as `data`.
    func appendCloudEvent(type: String, into buffer: inout [UInt8]) {
        let store = "tributary://" + storeID.uuidString.lowercased()
        var json = JSONWriter()
        json.object { o in
            o.field("specversion", "1.0")
            o.field("id", eventID)
            o.field("source", store)
            o.field("type", type)
            o.field("subject", store)
            o.field("time", ISO8601.string(from: timestamp))
            o.field("datacontenttype", "application/json")
            o.key("data")
            o.object { d in writeBody(to: &d) }
        }
        buffer.append(contentsOf: json.bytes)
        buffer.append(0x0A)
    }
}
