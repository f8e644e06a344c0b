import Foundation
import Tributary

/// Texts every record of a transaction shares (store ID, token, commit time, object URI
/// prefixes), formatted once per transaction instead of once per record: encoding is on
/// the export's hot path, and a transaction often holds thousands of changes.
///
/// ```swift
/// var texts = RecordTexts()
/// texts.update(for: record)
/// print(texts.token, texts.uri(record.objectID))
/// ```
struct RecordTexts {
    private var storeID: UUID?
    private var tokenValue: Int64 = -1
    private var time: Date?
    private var prefixes: [String: String] = [:]
    private var jsonPrefixes: [String: [UInt8]] = [:]
    /// The store ID in lowercase.
    private(set) var store = ""
    /// The token as history prints it.
    private(set) var token = ""
    /// The commit time in ISO 8601.
    private(set) var timestamp = ""
    /// ``store``, ``token`` and ``timestamp`` as JSON strings (quoted, escaped), in UTF-8.
    private(set) var storeJSON: [UInt8] = []
    private(set) var tokenJSON: [UInt8] = []
    private(set) var timestampJSON: [UInt8] = []

    /// Makes the texts those of `record`'s transaction.
    mutating func update(for record: StreamRecord) {
        if record.storeID != storeID {
            storeID = record.storeID
            store = record.storeID.lowercasedString
            storeJSON = []
            JSONWriter.appendString(store, to: &storeJSON)
            prefixes = [:]
            jsonPrefixes = [:]
            tokenValue = -1
        }
        if record.position.token != tokenValue {
            tokenValue = record.position.token
            token = record.token.description
            tokenJSON = []
            JSONWriter.appendString(token, to: &tokenJSON)
        }
        if record.timestamp != time {
            time = record.timestamp
            timestamp = ISO8601.string(from: record.timestamp)
            timestampJSON = []
            JSONWriter.appendString(timestamp, to: &timestampJSON)
        }
    }

    /// The URI of `id` (``ObjectID/uriRepresentation``), from a cached prefix when it is of this store.
    mutating func uri(_ id: ObjectID) -> String {
        guard id.storeID == storeID else { return id.uriRepresentation }
        if let prefix = prefixes[id.entityName] { return prefix + String(id.primaryKey) }
        let prefix = "tributary://" + store + "/" + id.entityName + "/p"
        prefixes[id.entityName] = prefix
        return prefix + String(id.primaryKey)
    }

    /// Appends the URI of `id` as a JSON string, as `JSONWriter.appendString(uri(id))` does,
    /// from a cached prefix (already escaped) when it is of this store.
    mutating func appendURI(_ id: ObjectID, to buffer: inout [UInt8]) {
        guard id.storeID == storeID else { return JSONWriter.appendString(id.uriRepresentation, to: &buffer) }
        if let prefix = jsonPrefixes[id.entityName] {
            buffer.append(contentsOf: prefix)
        } else {
            var prefix: [UInt8] = []
            JSONWriter.appendString("tributary://" + store + "/" + id.entityName + "/p", to: &prefix)
            prefix.removeLast() // the closing quote
            jsonPrefixes[id.entityName] = prefix
            buffer.append(contentsOf: prefix)
        }
        NativeEncoder.appendDigits(id.primaryKey, to: &buffer)
        buffer.append(0x22)
    }
}
