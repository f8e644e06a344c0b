import Foundation
import Tributary

/// Tributary's own record: the `history --json` change flattened to one line, with the
/// transaction's fields, the store's ID and the record's position.
///
/// ```swift
/// var bytes: [UInt8] = []
/// var encoder = NativeEncoder()
/// encoder.encode(record, into: &bytes)
/// // {"position":"7.0","storeID":"…","token":"7-6f9619ff","index":0,"timestamp":"…","author":null,
/// //  "contextName":null,"entity":"Tag","objectID":"tributary://…/Tag/p1","type":"insert","after":{…}}
/// ```
public struct NativeEncoder: RecordEncoder {
    private var json = JSONWriter()
    private var texts = RecordTexts()
    /// The attributes whose blobs are marked apart from text (``BlobMarking``).
    private var marking = BlobMarking()
    /// Dates by property index (each column's dates tend to share a day).
    private var dates: [DateTexts] = []
    /// The property names of the last records, by position, and where their JSON strings are
    /// in `nameText` (one array: appending from it counts no references).
    private var names: [(name: String, start: Int, end: Int)] = []
    private var nameText: [UInt8] = []
    /// The header's text shared by a transaction's records: from the store ID to `"index":`.
    private var transactionText: [UInt8] = []
    private var transactionKey: (store: UUID, token: Int64)?
    /// The header's text shared by the records of one entity in a transaction: from
    /// `,"timestamp":` to the object URI's prefix.
    private var entityText: [UInt8] = []
    private var entityKey: (token: Int64, timestamp: Date, author: String?, contextName: String?, reason: String?, entity: String, store: UUID)?

    /// An encoder.
    public init() {}

    public mutating func encode(_ record: StreamRecord, into buffer: inout [UInt8]) {
        texts.update(for: record)
        if (record.operation == .create || record.operation == .read), record.movedFrom == nil, record.key.isEmpty,
           !record.properties.contains(where: { $0.isMembershipChange || $0.isValueExcluded }) {
            encodeInsert(record, into: &buffer)
            return
        }
        json.reset()
        json.object { o in
            o.field("position", record.position.description)
            o.field("storeID", texts.store)
            RecordBody.writeTransaction(record, texts: texts, to: &o)
            RecordBody.write(record, texts: &texts, marking: marking, to: &o)
        }
        buffer.append(contentsOf: json.bytes)
        buffer.append(0x0A)
    }

    public mutating func use(_ model: ManagedObjectModel) { marking = BlobMarking(model) }

    /// The schema record in the native form; its model is the encoder's from here on (``use(_:)``).
    public mutating func encodeSchema(_ record: SchemaRecord, into buffer: inout [UInt8]) {
        use(record.change.model)
        record.appendNative(into: &buffer)
    }

    /// Inserts and reads without links, excluded values, a move or a declared key (nearly every record of a bulk
    /// load), written straight into `buffer` with the field names as ready-made bytes: the
    /// same bytes as the general path through ``JSONWriter``, in a third of the time.
    private mutating func encodeInsert(_ record: StreamRecord, into buffer: inout [UInt8]) {
        appendHeader(position: record.position, storeID: record.storeID, author: record.author, contextName: record.contextName, reason: record.reason, objectID: record.objectID,
                     operation: record.operation, into: &buffer)
        record.properties.withUnsafeBufferPointer { properties in
            for k in properties.indices {
                appendName(properties[k].name, at: k, to: &buffer)
                switch properties[k].after {
                case .date(let date)?: appendDate(date, at: k, to: &buffer)
                case .data(let bytes)? where marking.marks(record.modelEntityName, properties[k].name): Self.appendMarkedBlob(bytes, to: &buffer)
                case let value?: Self.appendValue(value, to: &buffer)
                case nil: Self.append("null", to: &buffer)
                }
            }
        }
        Self.append("}}\n", to: &buffer)
    }

    /// Encodes `change`, an insert read in place from the history of store `storeID`, exactly
    /// as ``encode(_:into:)`` encodes the same change made into a ``StreamRecord`` at
    /// `position`, without making one (nor its property values): the exporter's fast path.
    /// Returns false, appending nothing, for what this form does not cover (updates, deletes,
    /// links, values excluded from history, inserts of a moved object or with a declared key):
    /// encode those as records.
    ///
    /// ```swift
    /// if try !encoder.encodeInsert(view, position: position, storeID: storeID, into: &line) {
    ///     encoder.encode(StreamRecord(change: try view.copy(), timestamp: view.timestamp, author: view.author, contextName: view.contextName), into: &line)
    /// }
    /// ```
    public mutating func encodeInsert(_ change: HistoryChangeView, position: StreamPosition, storeID: UUID, into buffer: inout [UInt8]) throws -> Bool {
        guard change.changeType == .insert, !position.isSnapshot, change.movedFrom == nil, change.key.isEmpty else { return false }
        let start = buffer.count
        texts.update(storeID: storeID, token: position.token, timestamp: change.timestamp)
        appendHeader(position: position, storeID: storeID, author: change.author, contextName: change.contextName, reason: change.reason,
                     objectID: ObjectID(storeID: storeID, entityName: change.entityName, primaryKey: change.primaryKey), operation: .create, into: &buffer)
        var k = 0
        var covered = true
        try change.forEachStoredProperty { property in
            guard covered else { return }
            guard !property.isMembershipChange, !property.isValueExcluded else {
                covered = false
                return
            }
            appendName(property.name, at: k, to: &buffer)
            switch property.after {
            case nil, .null?: Self.append("null", to: &buffer)
            case .text(let utf8)?: JSONWriter.appendString(utf8: utf8, to: &buffer)
            case .integer(let i)?: Self.appendDigits(i, to: &buffer)
            case .date(let seconds)?: appendDate(Date(timeIntervalSince1970: seconds), at: k, to: &buffer)
            case let value?:
                let value = value.attributeValue(storeID: storeID)
                if case .data(let bytes) = value, marking.marks(change.entityName, property.name) {
                    Self.appendMarkedBlob(bytes, to: &buffer)
                } else {
                    Self.appendValue(value, to: &buffer)
                }
            }
            k += 1
        }
        guard covered else {
            buffer.removeSubrange(start...)
            return false
        }
        Self.append("}}\n", to: &buffer)
        return true
    }

    /// Everything before the first property of an insert or read: three appends of texts kept
    /// per transaction and entity (the other fields repeat from record to record).
    private mutating func appendHeader(position: StreamPosition, storeID: UUID, author: String?, contextName: String?, reason: String?, objectID: ObjectID,
                                       operation: StreamOperation, into buffer: inout [UInt8]) {
        if transactionKey.map({ $0.store != storeID || $0.token != position.token }) ?? true {
            transactionKey = (storeID, position.token)
            transactionText.removeAll(keepingCapacity: true)
            Self.append(#"","storeID":"#, to: &transactionText)
            transactionText.append(contentsOf: texts.storeJSON)
            Self.append(#","token":"#, to: &transactionText)
            transactionText.append(contentsOf: texts.tokenJSON)
            Self.append(#","index":"#, to: &transactionText)
            entityKey = nil
        }
        if entityKey.map({ $0.token != position.token || $0.timestamp != texts.time || $0.author != author || $0.contextName != contextName || $0.reason != reason || $0.entity != objectID.entityName || $0.store != objectID.storeID }) ?? true {
            entityKey = (position.token, texts.time ?? Date.distantPast, author, contextName, reason, objectID.entityName, objectID.storeID)
            entityText.removeAll(keepingCapacity: true)
            Self.append(#","timestamp":"#, to: &entityText)
            entityText.append(contentsOf: texts.timestampJSON)
            Self.append(#","author":"#, to: &entityText)
            Self.appendOptional(author, to: &entityText)
            Self.append(#","contextName":"#, to: &entityText)
            Self.appendOptional(contextName, to: &entityText)
            if let reason {
                Self.append(#","reason":"#, to: &entityText)
                JSONWriter.appendString(reason, to: &entityText)
            }
            Self.append(#","entity":"#, to: &entityText)
            JSONWriter.appendString(objectID.entityName, to: &entityText)
            Self.append(#","objectID":"#, to: &entityText)
            texts.appendURIPrefix(objectID, to: &entityText)
        }
        Self.append(#"{"position":""#, to: &buffer)
        Self.appendDigits(position.token, to: &buffer)
        buffer.append(0x2E)
        if position.isSnapshot { buffer.append(0x72) }
        Self.appendDigits(Int64(position.index), to: &buffer)
        buffer.append(contentsOf: transactionText)
        Self.appendDigits(Int64(position.index), to: &buffer)
        buffer.append(contentsOf: entityText)
        Self.appendDigits(objectID.primaryKey, to: &buffer)
        buffer.append(0x22)
        Self.append(operation == .create ? #","type":"insert","after":{"# : #","type":"read","after":{"#, to: &buffer)
    }

    /// Appends a constant's UTF-8 (no reference counting, unlike an array's).
    @inline(__always)
    private static func append(_ text: StaticString, to buffer: inout [UInt8]) {
        text.withUTF8Buffer { buffer.append(contentsOf: $0) }
    }

    /// The `"name":` of the `k`th property (after a comma unless first), from a cache by position.
    private mutating func appendName(_ name: String, at k: Int, to buffer: inout [UInt8]) {
        if k > 0 { buffer.append(0x2C) }
        if k < names.count, names[k].name == name {
            let (start, end) = (names[k].start, names[k].end)
            nameText.withUnsafeBufferPointer { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: $0[start..<end])) }
        } else {
            if nameText.count > 1 << 16 {
                nameText.removeAll(keepingCapacity: true)
                names.removeAll(keepingCapacity: true)
            }
            let start = nameText.count
            JSONWriter.appendString(name, to: &nameText)
            buffer.append(contentsOf: nameText[start...])
            let entry = (name, start, nameText.count)
            if k < names.count { names[k] = entry } else if k == names.count, k < 64 { names.append(entry) }
        }
        buffer.append(0x3A)
    }

    /// A date value of the `k`th property, as a JSON string (each column's dates share a day), or a
    /// number where ISO 8601 cannot write it (``JSONWriter/appendUnsupportedDate(_:to:)``).
    private mutating func appendDate(_ date: Date, at k: Int, to buffer: inout [UInt8]) {
        guard !JSONWriter.appendUnsupportedDate(date, to: &buffer) else { return }
        buffer.append(0x22)
        if k < 64 {
            while dates.count <= k { dates.append(DateTexts()) }
            dates[k].append(date, to: &buffer)
        } else {
            ISO8601.append(date, to: &buffer)
        }
        buffer.append(0x22)
    }

    private static func appendOptional(_ text: String?, to buffer: inout [UInt8]) {
        if let text { JSONWriter.appendString(text, to: &buffer) } else { append("null", to: &buffer) }
    }

    /// Decimal digits of `value`, as `String(value)` writes them.
    static func appendDigits(_ value: Int64, to buffer: inout [UInt8]) {
        guard value != 0 else { buffer.append(0x30); return }
        if value < 0 {
            guard value != .min else { buffer.append(contentsOf: String(value).utf8); return }
            buffer.append(0x2D)
        }
        var magnitude = value.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { raw in
            while magnitude > 0 {
                raw[19 - count] = UInt8(truncatingIfNeeded: magnitude % 10) + 0x30
                magnitude /= 10
                count += 1
            }
            buffer.append(contentsOf: raw[(20 - count)...])
        }
    }

    /// A value as ``JSONWriter/value(_:)`` writes it.
    /// A blob in an attribute that is not binary, as ``BlobMarking`` marks it: `{"base64":"…"}`.
    private static func appendMarkedBlob(_ bytes: Data, to buffer: inout [UInt8]) {
        var json = JSONWriter()
        PersistentHistoryChange.writeMarkedBlob(bytes, to: &json)
        buffer.append(contentsOf: json.bytes)
    }

    static func appendValue(_ value: AttributeValue, to buffer: inout [UInt8]) {
        switch value {
        case .null: append("null", to: &buffer)
        case .string(let text): JSONWriter.appendString(text, to: &buffer)
        case .integer(let i): appendDigits(i, to: &buffer)
        case .date(let date): JSONWriter.appendDate(date, to: &buffer)
        default:
            var json = JSONWriter()
            json.value(value)
            buffer.append(contentsOf: json.bytes)
        }
    }
}
