import Foundation
import Tributary

/// The attributes of one entity in column order, for changes read in column form.
final class ReplayLayout: Sendable {
    let entityName: String
    let names: [String]
    let nameBytes: [[UInt8]]
    let types: [AttributeType]
    /// Attributes the target's triggers compute (left out of inserts).
    let derived: UInt64
    /// Attributes an insert must give (not optional, no default, not derived).
    let required: UInt64

    /// The layout of `entity`, nil when it has more attributes than a 64-bit mask holds.
    init?(entity: EntityDescription) {
        let attributes = entity.attributes
        guard attributes.count <= 64 else { return nil }
        entityName = entity.name
        names = attributes.map(\.name)
        nameBytes = attributes.map { Array($0.name.utf8) }
        types = attributes.map(\.type)
        var derived: UInt64 = 0, required: UInt64 = 0
        for (c, attribute) in attributes.enumerated() {
            if attribute.isDerived { derived |= 1 << UInt64(c) }
            if !attribute.isOptional && attribute.defaultValue == nil && !attribute.isDerived { required |= 1 << UInt64(c) }
        }
        self.derived = derived
        self.required = required
    }
}

/// The fast path of replay for native inserts and reads: scans the record's bytes once,
/// straight into a column-ordered row of the entity's attributes, without building a
/// dictionary per record or a `String` per key (a declared `key` is read as the general path
/// reads it). Anything else (updates, deletes, relationships, moves, escaped keys, unexpected
/// shapes, bad values) returns nil, and the caller parses the record the general way, which
/// gives the same change or the same error.
///
/// ```swift
/// let native = NativeRecordReader()
/// let change = native.change(line, model: model, ids: ids)   // nil: use the general path
/// ```
final class NativeRecordReader {
    private var layouts: [String: ReplayLayout?] = [:]
    private var lastTimestamp: [UInt8] = []
    private var lastDate: Date?

    /// The change of a native insert or read record, nil when the general path must read it.
    func change(_ line: ArraySlice<UInt8>, model: ManagedObjectModel, ids: ObjectIDReader) -> ReplayChange? {
        var scanner = RecordJSONParser(line)
        return (try? scanner.scanNative(model: model, ids: ids, reader: self)) ?? nil
    }

    fileprivate func layout(_ entityName: String, model: ManagedObjectModel) -> ReplayLayout? {
        if let known = layouts[entityName] { return known }
        let layout = model.entity(named: entityName).flatMap(ReplayLayout.init(entity:))
        layouts[entityName] = layout
        return layout
    }

    /// The commit time in `bytes` (records of a transaction share it, so the last one is kept).
    fileprivate func timestamp(_ bytes: ArraySlice<UInt8>) -> Date? {
        if sameBytes(bytes, lastTimestamp) { return lastDate }
        lastTimestamp = Array(bytes)
        lastDate = ISO8601.date(from: String(decoding: bytes, as: UTF8.self))
        return lastDate
    }
}

/// Whether `a` holds the bytes of `b` (a `memcmp`: `elementsEqual` was measured slow here).
@inline(__always)
func sameBytes(_ a: ArraySlice<UInt8>, _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    guard !b.isEmpty else { return true }
    return a.withUnsafeBytes { x in b.withUnsafeBytes { y in memcmp(x.baseAddress!, y.baseAddress!, b.count) == 0 } }
}

/// `yyyy-MM-ddTHH:mm:ss[.fff]Z` (what the encoders write) read from its bytes, giving the
/// same date as ``ISO8601/date(from:)``; nil for any other form (the caller then uses it).
func canonicalDate(_ text: ArraySlice<UInt8>) -> Date? {
    guard text.count >= 20 else { return nil }
    var i = text.startIndex
    func number(_ count: Int) -> Int? {
        var value = 0
        for _ in 0..<count {
            let c = text[i]
            guard c >= 48, c <= 57 else { return nil }
            value = value * 10 + Int(c - 48)
            i += 1
        }
        return value
    }
    func expect(_ c: UInt8) -> Bool {
        guard text[i] == c else { return false }
        i += 1
        return true
    }
    guard let year = number(4), expect(45), let month = number(2), expect(45), let day = number(2), expect(84),
          let hour = number(2), expect(58), let minute = number(2), expect(58), let second = number(2) else { return nil }
    guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
    var fraction = 0.0
    if i < text.endIndex, text[i] == 46 {
        i += 1
        var scale = 0.1
        var digits = 0
        while i < text.endIndex, text[i] >= 48, text[i] <= 57 {
            fraction += Double(text[i] - 48) * scale
            scale /= 10
            i += 1
            digits += 1
        }
        guard digits > 0 else { return nil }
    }
    guard i == text.endIndex - 1, text[i] == 90 else { return nil }
    // Days from 1970-01-01 in the proleptic Gregorian calendar, as timegm counts them.
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    let days = era * 146_097 + dayOfEra - 719_468
    let epoch = days * 86_400 + hour * 3600 + minute * 60 + second
    return Date(timeIntervalSince1970: Double(epoch) + fraction)
}

private enum NativeKey {
    static let type = Array("type".utf8)
    static let objectID = Array("objectID".utf8)
    static let token = Array("token".utf8)
    static let timestamp = Array("timestamp".utf8)
    static let after = Array("after".utf8)
    static let relationships = Array("relationships".utf8)
    static let movedFrom = Array("movedFrom".utf8)
    static let key = Array("key".utf8)
    static let insert = Array("insert".utf8)
    static let read = Array("read".utf8)
}

extension RecordJSONParser {
    private func byte(_ c: UInt8) -> Bool { i < bytes.endIndex && bytes[i] == c }

    /// The bytes of a string without escapes (`i` at its opening quote), nil when it has any.
    private mutating func plainString() -> Range<Int>? {
        guard byte(0x22) else { return nil }
        let start = i + 1
        var k = start
        while k < bytes.endIndex, bytes[k] != 0x22, bytes[k] != 0x5C { k += 1 }
        guard k < bytes.endIndex, bytes[k] == 0x22 else { return nil }
        i = k + 1
        return start..<k
    }

    /// Skips a value, checking it as the general parser does.
    private mutating func skipValue() throws {
        if byte(0x22), plainString() != nil { return }
        _ = try value(depth: 1)
    }

    fileprivate mutating func scanNative(model: ManagedObjectModel, ids: ObjectIDReader, reader: NativeRecordReader) throws -> ReplayChange? {
        skipSpace()
        guard byte(0x7B) else { return nil }
        i += 1
        var operation: StreamOperation?
        var id: ObjectID?
        var token: Int64?
        var timestamp: Date?
        var layout: ReplayLayout?
        var row: [AttributeValue] = []
        var given: UInt64 = 0
        var declared: [String: AttributeValue] = [:]
        var seen: UInt8 = 0
        func once(_ bit: UInt8) -> Bool {
            guard seen & bit == 0 else { return false }
            seen |= bit
            return true
        }
        while true {
            skipSpace()
            guard let keyRange = plainString() else { return nil }
            let key = bytes[keyRange]
            skipSpace()
            guard byte(0x3A) else { return nil }
            i += 1
            skipSpace()
            if sameBytes(key, NativeKey.type) {
                guard once(1), let text = plainString() else { return nil }
                if sameBytes(bytes[text], NativeKey.insert) { operation = .create } else if sameBytes(bytes[text], NativeKey.read) { operation = .read } else { return nil }
            } else if sameBytes(key, NativeKey.objectID) {
                guard once(2), let text = plainString(), let read = ids.read(bytes[text]) else { return nil }
                id = read
            } else if sameBytes(key, NativeKey.token) {
                guard once(4), let text = plainString(), let value = Self.tokenValue(bytes[text]) else { return nil }
                token = value
            } else if sameBytes(key, NativeKey.timestamp) {
                guard once(8) else { return nil }
                if byte(0x22) {
                    guard let text = plainString() else { return nil }
                    timestamp = reader.timestamp(bytes[text])
                } else {
                    try skipValue()
                }
            } else if sameBytes(key, NativeKey.after) {
                // The encoder writes the object ID and type before the values.
                guard once(16), operation != nil, let id, let entity = reader.layout(id.entityName, model: model) else { return nil }
                layout = entity
                row = Array(repeating: .null, count: entity.names.count)
                guard try scanValues(entity, into: &row, given: &given, ids: ids) else { return nil }
            } else if sameBytes(key, NativeKey.key) {
                // A declared key (``ReplayChange/key``), written after the object ID.
                guard once(32), let id, let entity = model.entity(named: id.entityName) else { return nil }
                declared = try ReplayChange.declaredKey(try value(depth: 1), of: entity)
            } else if sameBytes(key, NativeKey.relationships) || sameBytes(key, NativeKey.movedFrom) {
                return nil
            } else {
                try skipValue()
            }
            skipSpace()
            guard i < bytes.endIndex else { return nil }
            if bytes[i] == 0x2C { i += 1; continue }
            if bytes[i] == 0x7D { i += 1; break }
            return nil
        }
        skipSpace()
        guard i == bytes.endIndex, let operation, let id, let token else { return nil }
        if layout == nil {
            guard let entity = reader.layout(id.entityName, model: model) else { return nil }
            layout = entity
            row = Array(repeating: .null, count: entity.names.count)
        }
        var change = ReplayChange(operation: operation, primaryKey: id.primaryKey, token: token, timestamp: timestamp, layout: layout!, row: row, given: given)
        change.key = declared
        return change
    }

    /// Reads the `after` object into `row`; false when the general path must read it.
    private mutating func scanValues(_ layout: ReplayLayout, into row: inout [AttributeValue], given: inout UInt64, ids: ObjectIDReader) throws -> Bool {
        guard byte(0x7B) else { return false }
        i += 1
        skipSpace()
        if byte(0x7D) { i += 1; return true }
        var next = 0
        let count = layout.names.count
        while true {
            skipSpace()
            guard let keyRange = plainString() else { return false }
            let key = bytes[keyRange]
            // Keys usually come in the model's order: try the next column first.
            var column = -1
            for step in 0..<count {
                let c = (next + step) % count
                if sameBytes(key, layout.nameBytes[c]) { column = c; break }
            }
            guard column >= 0 else { return false }
            next = column + 1
            skipSpace()
            guard byte(0x3A) else { return false }
            i += 1
            skipSpace()
            guard i < bytes.endIndex else { return false }
            let type = layout.types[column]
            let value: AttributeValue?
            switch bytes[i] {
            case 0x22 where type == .date:
                let start = i
                if let text = plainString(), let date = canonicalDate(bytes[text]) {
                    value = .date(date)
                } else {
                    i = start
                    value = ReplayChange.value(ofText: try string(), as: type)
                }
            case 0x22:
                let text = try string()
                value = type == .string ? .string(text) : ReplayChange.value(ofText: text, as: type)
            case 0x6E: try literal("null"); value = .null
            case 0x74: try literal("true"); value = AttributeValue.bool(true).coerced(to: type)
            case 0x66: try literal("false"); value = AttributeValue.bool(false).coerced(to: type)
            case 0x7B, 0x5B: return false
            default:
                switch try number() {
                case .integer(let n): value = ReplayChange.number(.integer(n), as: type)
                case .double(let d): value = ReplayChange.number(.double(d), as: type)
                default: return false
                }
            }
            guard let value else { return false }
            row[column] = value
            given |= 1 << UInt64(column)
            skipSpace()
            guard i < bytes.endIndex else { return false }
            if bytes[i] == 0x2C { i += 1; continue }
            if bytes[i] == 0x7D { i += 1; return true }
            return false
        }
    }

    /// The value of a token text (`1042-6f9619ff`): its digits before the dash.
    private static func tokenValue(_ text: ArraySlice<UInt8>) -> Int64? {
        var value: Int64 = 0
        var digits = 0
        for c in text {
            if c == 0x2D { return digits > 0 ? value : nil }
            guard c >= 0x30, c <= 0x39, digits < 18 else { return nil }
            value = value * 10 + Int64(c - 0x30)
            digits += 1
        }
        return nil
    }
}
