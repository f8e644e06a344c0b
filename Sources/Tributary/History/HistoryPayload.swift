import Foundation

/// The binary form of a transaction's changes, stored (zstd-compressed when it
/// pays) in one row per transaction. Values are self-describing, so a payload
/// decodes without the model.
///
/// Layout: a string table (entity and property names), then each change:
/// type, entity, primary key, properties; each property: name, flags, values
/// or added/removed keys. Integers are LEB128 varints (zigzag for signed).
struct HistoryPayload {
    static let rawMarker: UInt8 = 1
    static let zstdMarker: UInt8 = 2
    /// Payloads smaller than this are stored uncompressed.
    static let compressionThreshold = 96

    enum ValueTag: UInt8 {
        case null = 0, integer, double, text, blob, boolTrue, boolFalse, date, uuid, objectID
    }

    struct Flags: OptionSet {
        let rawValue: UInt8
        static let before = Flags(rawValue: 1)
        static let after = Flags(rawValue: 2)
        static let excluded = Flags(rawValue: 4)
        static let membership = Flags(rawValue: 8)
    }

    // MARK: Encoding

    /// Appends one change in the payload format, interning its names.
    static func encodeChange(_ change: RecordedChange, into body: inout ByteWriter, names: inout NameTable) {
        body.byte(change.type == .insert ? 0 : change.type == .update ? 1 : 2)
        body.varint(UInt64(names.intern(change.entity)))
        body.signed(change.primaryKey)
        body.varint(UInt64(change.properties.count))
        for property in change.properties {
            body.varint(UInt64(names.intern(property.name)))
            var flags: Flags = []
            if property.before != nil { flags.insert(.before) }
            if property.after != nil { flags.insert(.after) }
            if property.excluded { flags.insert(.excluded) }
            if property.membership != nil { flags.insert(.membership) }
            body.byte(flags.rawValue)
            if let value = property.before { body.value(value) { names.intern($0) } }
            if let value = property.after { body.value(value) { names.intern($0) } }
            if let membership = property.membership {
                body.varint(UInt64(names.intern(membership.destination)))
                body.varint(UInt64(membership.added.count))
                for key in membership.added { body.signed(key) }
                body.varint(UInt64(membership.removed.count))
                for key in membership.removed { body.signed(key) }
            }
        }
    }

    /// zstd's fast level -1: as small as level 1 on history bodies (8.1 against 7.9 bytes a
    /// change in the benchmark) and a third faster, on the writer's commit path.
    static let compressionLevel: Int32 = -1

    /// The string table and change count that precede the changes.
    private static func header(count: Int, names: NameTable) -> ByteWriter {
        var out = ByteWriter()
        out.varint(UInt64(names.strings.count))
        for s in names.strings { out.string(s) }
        out.varint(UInt64(count))
        return out
    }

    /// The stored form: marker, string table, change count, changes; compressed when it pays.
    static func finish(body: [UInt8], count: Int, names: NameTable) throws -> [UInt8] {
        var out = header(count: count, names: names)
        out.bytes.append(contentsOf: body)
        if out.bytes.count < compressionThreshold {
            return [rawMarker] + out.bytes
        }
        return [zstdMarker] + (try Zstd.compress(out.bytes, level: compressionLevel))
    }

    /// The stored form of a body whose first chunks are already compressed as `frames`
    /// (``HistoryChunkCompressor``) and whose last part is `tail`: the header and the tail
    /// become frames of their own, and the concatenated frames decompress to the same bytes
    /// as ``finish(body:count:names:)`` stores.
    static func finish(frames: [[UInt8]], tail: UnsafeRawBufferPointer, count: Int, names: NameTable) throws -> [UInt8] {
        var stored = [zstdMarker]
        stored += try Zstd.compress(header(count: count, names: names).bytes, level: compressionLevel)
        for frame in frames { stored += frame }
        if !tail.isEmpty { stored += try Zstd.compress(tail, level: compressionLevel) }
        return stored
    }

    /// Decodes one change of a payload body (no string table) back into recorded form.
    static func decodeChange(_ reader: inout ByteReader, names: [String]) throws -> RecordedChange {
        let typeByte = try reader.byte()
        guard typeByte <= 2 else { throw damaged() }
        func name() throws -> String {
            let i = try reader.count()
            guard i < names.count else { throw damaged() }
            return names[i]
        }
        let entity = try name()
        let key = try reader.signed()
        var change = RecordedChange(type: typeByte == 0 ? .insert : typeByte == 1 ? .update : .delete, entity: entity, primaryKey: key, properties: [])
        for _ in 0..<(try reader.count()) {
            var property = RecordedChange.Property(name: try name())
            let flags = Flags(rawValue: try reader.byte())
            property.excluded = flags.contains(.excluded)
            if flags.contains(.before) { property.before = try reader.value(storeID: HistoryRecorder.placeholderStore, names: names) }
            if flags.contains(.after) { property.after = try reader.value(storeID: HistoryRecorder.placeholderStore, names: names) }
            if flags.contains(.membership) {
                var membership = RecordedChange.Membership(destination: try name(), added: [], removed: [])
                for _ in 0..<(try reader.count()) { membership.added.append(try reader.signed()) }
                for _ in 0..<(try reader.count()) { membership.removed.append(try reader.signed()) }
                property.membership = membership
            }
            change.properties.append(property)
        }
        return change
    }

    // MARK: Decoding

    /// The decompressed bytes of a stored payload and its string table; the reader is left
    /// at the change count.
    static func open(_ stored: UnsafeRawBufferPointer) throws -> (bytes: [UInt8], names: [String], reader: ByteReader) {
        guard let marker = stored.first else { return ([], [], ByteReader(bytes: [])) }
        let bytes: [UInt8]
        switch marker {
        case rawMarker: bytes = Array(stored.dropFirst())
        case zstdMarker: bytes = try Zstd.decompress(UnsafeRawBufferPointer(rebasing: stored.dropFirst()))
        default: throw damaged()
        }
        var reader = ByteReader(bytes: bytes)
        let count = try reader.count()
        var names: [String] = []
        names.reserveCapacity(count)
        for _ in 0..<count { names.append(try reader.string()) }
        return (bytes, names, reader)
    }

    /// A change's header: type, entity, key and property count.
    static func changeHeader(_ reader: inout ByteReader, names: [String]) throws -> (PersistentHistoryChangeType, String, Int64, Int) {
        let typeByte = try reader.byte()
        guard typeByte <= 2 else { throw damaged() }
        let type: PersistentHistoryChangeType = typeByte == 0 ? .insert : typeByte == 1 ? .update : .delete
        let entity = try name(&reader, names)
        let key = try reader.signed()
        return (type, entity, key, try reader.count())
    }

    /// A property's name and flags.
    @inline(__always)
    static func propertyHeader(_ reader: inout ByteReader, names: [String]) throws -> (String, Flags) {
        let propertyName = try name(&reader, names)
        return (propertyName, Flags(rawValue: try reader.byte()))
    }

    @inline(__always)
    static func name(_ reader: inout ByteReader, _ names: [String]) throws -> String {
        let i = try reader.count()
        guard i < names.count else { throw damaged() }
        return names[i]
    }

    /// `count` properties, decoded.
    static func decodeProperties(_ reader: inout ByteReader, count: Int, names: [String], storeID: UUID) throws -> [PropertyChange] {
        var properties: [PropertyChange] = []
        properties.reserveCapacity(count)
        for _ in 0..<count {
            let (propertyName, flags) = try propertyHeader(&reader, names: names)
            let before = flags.contains(.before) ? try reader.value(storeID: storeID, names: names) : nil
            let after = flags.contains(.after) ? try reader.value(storeID: storeID, names: names) : nil
            if flags.contains(.membership) {
                let destination = try name(&reader, names)
                var added: [ObjectID] = []
                var removed: [ObjectID] = []
                for _ in 0..<(try reader.count()) { added.append(ObjectID(storeID: storeID, entityName: destination, primaryKey: try reader.signed())) }
                for _ in 0..<(try reader.count()) { removed.append(ObjectID(storeID: storeID, entityName: destination, primaryKey: try reader.signed())) }
                properties.append(PropertyChange(name: propertyName, before: before, after: after, added: added, removed: removed, isValueExcluded: flags.contains(.excluded)))
            } else {
                properties.append(PropertyChange(name: propertyName, before: before, after: after, isValueExcluded: flags.contains(.excluded)))
            }
        }
        return properties
    }

    /// Moves past `count` properties without building them.
    static func skipProperties(_ reader: inout ByteReader, count: Int) throws {
        for _ in 0..<count {
            _ = try reader.count()
            let flags = Flags(rawValue: try reader.byte())
            if flags.contains(.before) { try reader.skipValue() }
            if flags.contains(.after) { try reader.skipValue() }
            if flags.contains(.membership) { try skipMembership(&reader) }
        }
    }

    static func skipMembership(_ reader: inout ByteReader) throws {
        _ = try reader.count()
        for _ in 0..<(try reader.count()) { _ = try reader.varint() }
        for _ in 0..<(try reader.count()) { _ = try reader.varint() }
    }

    /// Decodes a stored payload into changes of `token`.
    static func decode(_ stored: UnsafeRawBufferPointer, token: PersistentHistoryToken, storeID: UUID, filter: (String, PersistentHistoryChangeType) -> Bool = { _, _ in true }) throws -> [PersistentHistoryChange] {
        guard !stored.isEmpty else { return [] }
        var (_, names, reader) = try open(stored)
        let changeCount = try reader.count()
        var changes: [PersistentHistoryChange] = []
        for index in 0..<changeCount {
            let (type, entity, key, propertyCount) = try changeHeader(&reader, names: names)
            guard filter(entity, type) else {
                try skipProperties(&reader, count: propertyCount)
                continue
            }
            let properties = try decodeProperties(&reader, count: propertyCount, names: names, storeID: storeID)
            changes.append(PersistentHistoryChange(token: token, index: index, changedObjectID: ObjectID(storeID: storeID, entityName: entity, primaryKey: key), changeType: type, properties: properties))
        }
        return changes
    }

    static func damaged() -> TributaryError {
        TributaryError(.io, "a history record is damaged", hint: "the store may be damaged; restore it from a copy")
    }
}

/// A change as the recorder collects it, before encoding.
struct RecordedChange {
    struct Property {
        var name: String
        var before: AttributeValue?
        var after: AttributeValue?
        var excluded = false
        var membership: Membership?
    }

    struct Membership {
        var destination: String
        var added: [Int64]
        var removed: [Int64]
    }

    var type: PersistentHistoryChangeType
    var entity: String
    var primaryKey: Int64
    var properties: [Property]
}

/// The names a payload refers to, numbered in order of first use.
struct NameTable {
    private(set) var strings: [String] = []
    private var index: [String: Int] = [:]

    mutating func intern(_ s: String) -> Int {
        if let i = index[s] { return i }
        index[s] = strings.count
        strings.append(s)
        return strings.count - 1
    }
}

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
