import Foundation

/// The binary form of a transaction's changes, stored (zstd-compressed when it
/// pays) in one row per transaction. Values are self-describing, so a payload
/// decodes without the model.
///
/// Layout: a string table (entity and property names), then each change:
/// type, entity, primary key, the moved key when the type byte has ``movedFlag``, the
/// declared key's names and values when it has ``keyFlag``, properties; each property: name, flags, values or added/removed keys. Integers are
/// LEB128 varints (zigzag for signed).
struct HistoryPayload {
    static let rawMarker: UInt8 = 1
    static let zstdMarker: UInt8 = 2
    /// Payloads smaller than this are stored uncompressed.
    static let compressionThreshold = 96

    /// Set on a change's type byte when the other key of a key change follows its primary
    /// key (``RecordedChange/movedKey``); history format 6. Payloads written before never set
    /// it, so they decode as they did.
    static let movedFlag: UInt8 = 0x80

    /// Set on a change's type byte when the values of the entity's declared key follow
    /// (``RecordedChange/key``): a count, then each attribute's name and value; history
    /// format 7. Only entities with a declared key (adopted tables) set it: the changes of
    /// every other entity are stored as before.
    static let keyFlag: UInt8 = 0x40

    /// A change's header as stored: type, entity, key, moved key, declared key and property count.
    struct ChangeHeader {
        let type: PersistentHistoryChangeType
        let entity: String
        let key: Int64
        let movedKey: Int64?
        let declaredKey: [(name: String, value: AttributeValue)]
        let propertyCount: Int

        /// The declared key's values by name, as ``PersistentHistoryChange/key`` gives them.
        var keyValues: [String: AttributeValue] {
            declaredKey.isEmpty ? [:] : Dictionary(declaredKey.map { ($0.name, $0.value) }, uniquingKeysWith: { a, _ in a })
        }
    }

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
        let type: UInt8 = change.type == .insert ? 0 : change.type == .update ? 1 : 2
        body.byte(type | (change.movedKey == nil ? 0 : movedFlag) | (change.key.isEmpty ? 0 : keyFlag))
        body.varint(UInt64(names.intern(change.entity)))
        body.signed(change.primaryKey)
        if let moved = change.movedKey { body.signed(moved) }
        if !change.key.isEmpty {
            body.varint(UInt64(change.key.count))
            for part in change.key {
                body.varint(UInt64(names.intern(part.name)))
                body.value(part.value) { names.intern($0) }
            }
        }
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
        let header = try changeHeader(&reader, names: names)
        func name() throws -> String { try Self.name(&reader, names) }
        var change = RecordedChange(type: header.type, entity: header.entity, primaryKey: header.key, properties: [], movedKey: header.movedKey, key: header.declaredKey)
        for _ in 0..<header.propertyCount {
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

    /// A change's header: type, entity, key, moved key, declared key and property count.
    static func changeHeader(_ reader: inout ByteReader, names: [String]) throws -> ChangeHeader {
        let typeByte = try reader.byte()
        let plain = typeByte & ~(movedFlag | keyFlag)
        guard plain <= 2 else { throw damaged() }
        let type: PersistentHistoryChangeType = plain == 0 ? .insert : plain == 1 ? .update : .delete
        let entity = try name(&reader, names)
        let key = try reader.signed()
        let moved = typeByte & movedFlag != 0 ? try reader.signed() : nil
        var declaredKey: [(name: String, value: AttributeValue)] = []
        if typeByte & keyFlag != 0 {
            for _ in 0..<(try reader.count()) {
                declaredKey.append((try name(&reader, names), try reader.value(storeID: HistoryRecorder.placeholderStore, names: names)))
            }
        }
        return ChangeHeader(type: type, entity: entity, key: key, movedKey: moved, declaredKey: declaredKey, propertyCount: try reader.count())
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
            let header = try changeHeader(&reader, names: names)
            guard filter(header.entity, header.type) else {
                try skipProperties(&reader, count: header.propertyCount)
                continue
            }
            let properties = try decodeProperties(&reader, count: header.propertyCount, names: names, storeID: storeID)
            changes.append(PersistentHistoryChange(token: token, index: index, changedObjectID: ObjectID(storeID: storeID, entityName: header.entity, primaryKey: header.key),
                                                   changeType: header.type, properties: properties,
                                                   movedKey: header.movedKey, key: header.keyValues))
        }
        return changes
    }

    static func damaged() -> TributaryError {
        TributaryError(.io, "a history record is damaged", hint: "the store may be damaged; restore it from a copy")
    }
}
