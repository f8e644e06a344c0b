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
    /// Dates by property index (each column's dates tend to share a day).
    private var dates: [DateTexts] = []
    /// The last record's entity and property names, as JSON strings.
    private var entity = ""
    private var entityJSON: [UInt8] = []
    private var names: [(name: String, json: [UInt8])] = []

    /// An encoder.
    public init() {}

    public mutating func encode(_ record: StreamRecord, into buffer: inout [UInt8]) {
        texts.update(for: record)
        if (record.operation == .create || record.operation == .read),
           !record.properties.contains(where: { $0.isMembershipChange || $0.isValueExcluded }) {
            encodeInsert(record, into: &buffer)
            return
        }
        json.reset()
        json.object { o in
            o.field("position", record.position.description)
            o.field("storeID", texts.store)
            RecordBody.writeTransaction(record, texts: texts, to: &o)
            RecordBody.write(record, texts: &texts, to: &o)
        }
        buffer.append(contentsOf: json.bytes)
        buffer.append(0x0A)
    }

    /// Inserts and reads without links or excluded values (nearly every record of a bulk
    /// load), written straight into `buffer` with the field names as ready-made bytes: the
    /// same bytes as the general path through ``JSONWriter``, in a third of the time.
    private mutating func encodeInsert(_ record: StreamRecord, into buffer: inout [UInt8]) {
        buffer.append(contentsOf: Self.positionKey)
        Self.appendDigits(record.position.token, to: &buffer)
        buffer.append(0x2E)
        if record.position.isSnapshot { buffer.append(0x72) }
        Self.appendDigits(Int64(record.position.index), to: &buffer)
        buffer.append(contentsOf: Self.storeIDKey)
        buffer.append(contentsOf: texts.storeJSON)
        buffer.append(contentsOf: Self.tokenKey)
        buffer.append(contentsOf: texts.tokenJSON)
        buffer.append(contentsOf: Self.indexKey)
        Self.appendDigits(Int64(record.position.index), to: &buffer)
        buffer.append(contentsOf: Self.timestampKey)
        buffer.append(contentsOf: texts.timestampJSON)
        buffer.append(contentsOf: Self.authorKey)
        Self.appendOptional(record.author, to: &buffer)
        buffer.append(contentsOf: Self.contextNameKey)
        Self.appendOptional(record.contextName, to: &buffer)
        buffer.append(contentsOf: Self.entityKey)
        if record.objectID.entityName != entity {
            entity = record.objectID.entityName
            entityJSON = []
            JSONWriter.appendString(entity, to: &entityJSON)
        }
        buffer.append(contentsOf: entityJSON)
        buffer.append(contentsOf: Self.objectIDKey)
        texts.appendURI(record.objectID, to: &buffer)
        buffer.append(contentsOf: record.operation == .create ? Self.insertAfter : Self.readAfter)
        record.properties.withUnsafeBufferPointer { properties in
            for k in properties.indices {
                if k > 0 { buffer.append(0x2C) }
                let name = properties[k].name
                if k < names.count, names[k].name == name {
                    buffer.append(contentsOf: names[k].json)
                } else {
                    var json: [UInt8] = []
                    JSONWriter.appendString(name, to: &json)
                    buffer.append(contentsOf: json)
                    if k < names.count { names[k] = (name, json) } else if k == names.count, k < 64 { names.append((name, json)) }
                }
                buffer.append(0x3A)
                switch properties[k].after {
                case .date(let date)?:
                    buffer.append(0x22)
                    if k < 64 {
                        while dates.count <= k { dates.append(DateTexts()) }
                        dates[k].append(date, to: &buffer)
                    } else {
                        ISO8601.append(date, to: &buffer)
                    }
                    buffer.append(0x22)
                case let value?: Self.appendValue(value, to: &buffer)
                case nil: buffer.append(contentsOf: Self.null)
                }
            }
        }
        buffer.append(contentsOf: Self.end)
    }

    private static let positionKey = Array(#"{"position":""#.utf8)
    private static let storeIDKey = Array(#"","storeID":"#.utf8)
    private static let tokenKey = Array(#","token":"#.utf8)
    private static let indexKey = Array(#","index":"#.utf8)
    private static let timestampKey = Array(#","timestamp":"#.utf8)
    private static let authorKey = Array(#","author":"#.utf8)
    private static let contextNameKey = Array(#","contextName":"#.utf8)
    private static let entityKey = Array(#","entity":"#.utf8)
    private static let objectIDKey = Array(#","objectID":"#.utf8)
    private static let insertAfter = Array(#","type":"insert","after":{"#.utf8)
    private static let readAfter = Array(#","type":"read","after":{"#.utf8)
    private static let end = Array("}}\n".utf8)
    private static let null = Array("null".utf8)

    private static func appendOptional(_ text: String?, to buffer: inout [UInt8]) {
        if let text { JSONWriter.appendString(text, to: &buffer) } else { buffer.append(contentsOf: null) }
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
    static func appendValue(_ value: AttributeValue, to buffer: inout [UInt8]) {
        switch value {
        case .null: buffer.append(contentsOf: null)
        case .string(let text): JSONWriter.appendString(text, to: &buffer)
        case .integer(let i): appendDigits(i, to: &buffer)
        case .date(let date):
            buffer.append(0x22)
            ISO8601.append(date, to: &buffer)
            buffer.append(0x22)
        default:
            var json = JSONWriter()
            json.value(value)
            buffer.append(contentsOf: json.bytes)
        }
    }
}

/// Dates as ``ISO8601/append(_:to:)`` writes them, with the `yyyy-MM-ddT` of the last day
/// written kept (dates of one export are mostly of a few days): hours, minutes, seconds and
/// milliseconds by arithmetic instead of `gmtime_r` each time.
struct DateTexts {
    private var day = Int64.min
    private var prefix: [UInt8] = []

    mutating func append(_ date: Date, to buffer: inout [UInt8]) {
        let seconds = date.timeIntervalSince1970
        var whole = seconds.rounded(.down)
        var millis = Int(((seconds - whole) * 1000).rounded())
        if millis == 1000 { whole += 1; millis = 0 }
        guard whole.magnitude < 1e11 else { return ISO8601.append(date, to: &buffer) }
        let w = Int64(whole)
        let d = w >= 0 ? w / 86_400 : (w - 86_399) / 86_400
        guard d == day else {
            let start = buffer.count
            ISO8601.append(date, to: &buffer)
            let count = buffer.count - start
            if (count == 20 || count == 24) && buffer[start + 10] == 0x54 {
                day = d
                prefix = Array(buffer[start..<(start + 11)])
            } else {
                day = .min
            }
            return
        }
        buffer.append(contentsOf: prefix)
        let inDay = Int(w - d * 86_400)
        func two(_ v: Int) {
            buffer.append(UInt8(48 + v / 10))
            buffer.append(UInt8(48 + v % 10))
        }
        two(inDay / 3600)
        buffer.append(0x3A)
        two(inDay / 60 % 60)
        buffer.append(0x3A)
        two(inDay % 60)
        if millis != 0 {
            buffer.append(0x2E)
            buffer.append(UInt8(48 + millis / 100))
            two(millis % 100)
        }
        buffer.append(0x5A)
    }
}
