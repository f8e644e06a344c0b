import Foundation

struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func byte(_ b: UInt8) { bytes.append(b) }

    mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(v & 0x7f) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    mutating func signed(_ value: Int64) { varint(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }

    mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func double(_ d: Double) {
        var bits = d.bitPattern
        for _ in 0..<8 {
            bytes.append(UInt8(bits & 0xff))
            bits >>= 8
        }
    }

    mutating func value(_ value: AttributeValue, intern: (String) -> Int) {
        typealias Tag = HistoryPayload.ValueTag
        switch value {
        case .null: byte(Tag.null.rawValue)
        case .integer(let i): byte(Tag.integer.rawValue); signed(i)
        case .double(let d): byte(Tag.double.rawValue); double(d)
        case .string(let s): byte(Tag.text.rawValue); string(s)
        case .data(let d): byte(Tag.blob.rawValue); varint(UInt64(d.count)); bytes.append(contentsOf: d)
        case .bool(let b): byte(b ? Tag.boolTrue.rawValue : Tag.boolFalse.rawValue)
        case .date(let d): byte(Tag.date.rawValue); double(d.timeIntervalSince1970)
        case .uuid(let u):
            byte(Tag.uuid.rawValue)
            withUnsafeBytes(of: u.uuid) { bytes.append(contentsOf: $0) }
        case .objectID(let id): byte(Tag.objectID.rawValue); varint(UInt64(intern(id.entityName))); signed(id.primaryKey)
        case .array(let items):
            // Arrays do not occur in recorded values; store them as null rather than fail a commit.
            _ = items
            byte(Tag.null.rawValue)
        }
    }
}
