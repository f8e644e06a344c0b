import Foundation

struct ByteReader {
    let bytes: [UInt8]
    var offset = 0

    init(bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    /// Moves past one tagged value.
    mutating func skipValue() throws {
        typealias Tag = HistoryPayload.ValueTag
        guard let tag = Tag(rawValue: try byte()) else { throw HistoryPayload.damaged() }
        switch tag {
        case .null, .boolTrue, .boolFalse: break
        case .integer: _ = try varint()
        case .double, .date: _ = try take(8)
        case .text, .blob: _ = try take(try count())
        case .uuid: _ = try take(16)
        case .objectID: _ = try varint(); _ = try varint()
        }
    }

    mutating func byte() throws -> UInt8 {
        guard offset < bytes.count else { throw HistoryPayload.damaged() }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func varint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try byte()
            result |= UInt64(b & 0x7f) << shift
            if b < 0x80 { return result }
            shift += 7
            guard shift < 64 else { throw HistoryPayload.damaged() }
        }
    }

    mutating func count() throws -> Int {
        let v = try varint()
        guard v <= UInt64(bytes.count) * 8 + 64 else { throw HistoryPayload.damaged() }
        return Int(v)
    }

    mutating func signed() throws -> Int64 {
        let v = try varint()
        return Int64(bitPattern: (v >> 1) ^ (0 &- (v & 1)))
    }

    mutating func take(_ n: Int) throws -> ArraySlice<UInt8> {
        guard n >= 0, offset + n <= bytes.count else { throw HistoryPayload.damaged() }
        defer { offset += n }
        return bytes[offset..<offset + n]
    }

    /// Text (repaired if not UTF-8, as SQLite may hold), read where it lies.
    mutating func string() throws -> String {
        let n = try count()
        guard offset + n <= bytes.count else { throw HistoryPayload.damaged() }
        defer { offset += n }
        return bytes.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[offset..<(offset + n)]), as: UTF8.self) }
    }

    /// A little-endian double, read where it lies.
    mutating func double() throws -> Double {
        guard offset + 8 <= bytes.count else { throw HistoryPayload.damaged() }
        defer { offset += 8 }
        let bits = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt64.self) }
        return Double(bitPattern: UInt64(littleEndian: bits))
    }

    mutating func value(storeID: UUID, names: [String]) throws -> AttributeValue {
        typealias Tag = HistoryPayload.ValueTag
        guard let tag = Tag(rawValue: try byte()) else { throw HistoryPayload.damaged() }
        switch tag {
        case .null: return .null
        case .integer: return .integer(try signed())
        case .double: return .double(try double())
        case .text: return .string(try string())
        case .blob: return .data(Data(try take(try count())))
        case .boolTrue: return .bool(true)
        case .boolFalse: return .bool(false)
        case .date: return .date(Date(timeIntervalSince1970: try double()))
        case .uuid:
            let b = Array(try take(16))
            return .uuid(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
        case .objectID:
            let i = try count()
            guard i < names.count else { throw HistoryPayload.damaged() }
            let entity = names[i]
            return .objectID(ObjectID(storeID: storeID, entityName: entity, primaryKey: try signed()))
        }
    }
}
