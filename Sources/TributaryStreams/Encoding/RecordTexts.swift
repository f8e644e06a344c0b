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
    /// The commit time the texts are of.
    private(set) var time: Date?
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
        update(storeID: record.storeID, token: record.position.token, timestamp: record.timestamp)
    }

    /// Makes the texts those of transaction `token` of store `storeID`, committed at `timestamp`.
    mutating func update(storeID id: UUID, token value: Int64, timestamp date: Date) {
        if id != storeID {
            storeID = id
            store = id.lowercasedString
            storeJSON = []
            JSONWriter.appendString(store, to: &storeJSON)
            prefixes = [:]
            jsonPrefixes = [:]
            tokenValue = -1
        }
        if value != tokenValue {
            tokenValue = value
            token = PersistentHistoryToken(value: value, storeID: id).description
            tokenJSON = []
            JSONWriter.appendString(token, to: &tokenJSON)
        }
        if date != time {
            time = date
            timestamp = ISO8601.string(from: date)
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

    /// Appends the opening quote and the URI of `id` without its primary key (when of this
    /// store: the rest is the key's digits and a closing quote).
    mutating func appendURIPrefix(_ id: ObjectID, to buffer: inout [UInt8]) {
        guard id.storeID == storeID else {
            var uri: [UInt8] = []
            JSONWriter.appendString("tributary://" + id.storeID.lowercasedString + "/" + id.entityName + "/p", to: &uri)
            buffer.append(contentsOf: uri.dropLast())
            return
        }
        if jsonPrefixes[id.entityName] == nil {
            var prefix: [UInt8] = []
            JSONWriter.appendString("tributary://" + store + "/" + id.entityName + "/p", to: &prefix)
            prefix.removeLast() // the closing quote
            jsonPrefixes[id.entityName] = prefix
        }
        buffer.append(contentsOf: jsonPrefixes[id.entityName]!)
    }
}
