import Foundation

/// Turns NDJSON objects into values for an entity: dates as ISO 8601 strings
/// (or seconds since 1970), UUIDs as strings, binary data as base64, to-one
/// relationships as object ID URIs and to-many ones as lists of them. Derived
/// attributes and an `objectID` key are skipped (the store computes them, and
/// rows match on unique keys), so what `tributary query --json` prints imports back. A key given twice, text that is not UTF-8, a
/// date outside years 0 to 9999 and an object ID of another store are refused.
///
/// ```swift
/// let decoder = try NDJSONDecoder(entity: "Post", store: store)
/// let values = try decoder.decode(line: #"{"title":"Hi"}"#, place: "posts.ndjson:1")
/// ```
public struct NDJSONDecoder: Sendable {
    /// Where a property's value goes.
    enum Slot: Sendable {
        /// An attribute: its index among the table's data columns.
        case attribute(Int, AttributeDescription)
        /// A derived attribute: skipped.
        case derived
        /// A to-one relationship whose key is in this table: its data column.
        case toOne(Int, RelationshipDescription)
        /// A relationship kept elsewhere (to-many, the key-less side of a one-to-one).
        case link(RelationshipDescription)
    }

    /// One property: its name as UTF-8 and its slot.
    struct Property: Sendable {
        let name: String
        let utf8: [UInt8]
        let slot: Slot
    }

    /// A property's slot without its description, for the per-field hot path.
    enum Kind: Sendable {
        case attribute(AttributeType)
        case derived
        case relationship
    }

    let entity: EntityDescription
    let properties: [Property]
    private let kinds: [Kind]
    /// Every property's name as UTF-8, one after the other, and where each is.
    private let nameBytes: [UInt8]
    private let nameRanges: [Range<Int>]
    /// The properties stored in the entity's row (attributes that are not derived, owned to-one relationships), as a mask.
    let storedMask: UInt64
    /// The store's ID: object IDs of other stores are refused.
    let storeID: UUID
    /// Supported dates, in seconds since 1970: years 0 to 9999.
    static let dateRange = ISO8601.supportedSeconds

    /// A decoder for rows of `entity` in `store`.
    public init(entity name: String, store: PersistentStore) throws {
        let table = try store.schema.table(name)
        self.entity = table.entity
        self.storeID = store.identifier
        var properties: [Property] = []
        for (i, attribute) in table.attributes.enumerated() {
            properties.append(Property(name: attribute.name, utf8: Array(attribute.name.utf8), slot: attribute.isDerived ? .derived : .attribute(i, attribute)))
        }
        for relationship in table.entity.relationships {
            let slot: Slot = if let j = table.foreignKeys.firstIndex(where: { $0.name == relationship.name }) {
                .toOne(table.attributes.count + j, relationship)
            } else {
                .link(relationship)
            }
            properties.append(Property(name: relationship.name, utf8: Array(relationship.name.utf8), slot: slot))
        }
        guard properties.count <= 64 else {
            throw TributaryError(.invalidInput, "\(name) has \(properties.count) properties; imports handle at most 64", location: name, hint: "split the entity, or insert its rows with a batch insert request")
        }
        self.properties = properties
        self.kinds = properties.map { property in
            switch property.slot {
            case .attribute(_, let attribute): .attribute(attribute.type)
            case .derived: .derived
            case .toOne, .link: .relationship
            }
        }
        var bytes: [UInt8] = []
        var ranges: [Range<Int>] = []
        for property in properties {
            ranges.append(bytes.count..<bytes.count + property.utf8.count)
            bytes += property.utf8
        }
        self.nameBytes = bytes
        self.nameRanges = ranges
        var stored: UInt64 = 0
        for (i, property) in properties.enumerated() {
            switch property.slot {
            case .attribute, .toOne: stored |= 1 << UInt64(i)
            case .derived, .link: break
            }
        }
        self.storedMask = stored
    }

    /// Decodes one line; errors carry `place` (file and line). Links are not checked against the store.
    public func decode(line: String, place: String) throws -> [String: AttributeValue] {
        var parser = NDJSONObjectParser()
        var row = NDJSONRow(count: properties.count)
        var text = line
        try text.withUTF8 { bytes in try decode(bytes, into: &row, parser: &parser, place: NDJSONPlace(file: place, line: nil), linkExists: nil) }
        var values: [String: AttributeValue] = [:]
        for (i, property) in properties.enumerated() where row.has(i) {
            if case .derived = property.slot { continue }
            values[property.name] = row.values[i]
        }
        return values
    }

    /// Decodes one line's bytes into `row` (emptied first). `linkExists`, when given, is asked
    /// whether each object a relationship names exists.
    func decode(_ line: UnsafeBufferPointer<UInt8>, into row: inout NDJSONRow, parser: inout NDJSONObjectParser, place: NDJSONPlace, linkExists: ((ObjectID) throws -> Bool)?) throws {
        row.clear()
        do {
            try parser.parseObject(line) { key, field in
                guard let index = propertyIndex(key) else {
                    // `query --json` leads with the row's object ID: what it prints imports back.
                    if key.elementsEqual("objectID".utf8) { return }
                    let name = String(decoding: key, as: UTF8.self)
                    throw TributaryError(.unknownProperty, "\(entity.name) has no attribute or relationship '\(name)'", location: place.description, hint: "\(entity.name) has \(entity.propertyNames.joined(separator: ", "))")
                }
                guard !row.has(index) else {
                    throw TributaryError(.invalidInput, "the key '\(properties[index].name)' appears twice in one object", location: place.description, hint: "give each key once")
                }
                row.mask |= 1 << UInt64(index)
                switch kinds[index] {
                case .attribute(let type):
                    row.values[index] = try attributeValue(field, type, index, place: place)
                case .derived:
                    return
                case .relationship:
                    let property = properties[index]
                    row.values[index] = try value(field, for: property, place: place, linkExists: linkExists)
                    if case .link = property.slot { row.hasLinks = true }
                }
            }
        } catch let error as NDJSONSyntaxError {
            throw TributaryError(.invalidInput, error.message, location: place.description, hint: error.hint)
        }
    }

    /// The index of the property named by `key`.
    @inline(__always)
    private func propertyIndex(_ key: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let keyBase = key.baseAddress else { return nil }
        return nameBytes.withUnsafeBufferPointer { names in
            for i in nameRanges.indices where nameRanges[i].count == key.count {
                if memcmp(names.baseAddress! + nameRanges[i].lowerBound, keyBase, key.count) == 0 { return i }
            }
            return nil
        }
    }

    private func value(_ field: NDJSONField, for property: Property, place: NDJSONPlace, linkExists: ((ObjectID) throws -> Bool)?) throws -> AttributeValue {
        switch property.slot {
        case .attribute, .derived:
            return .null   // decoded by the caller
        case .toOne(_, let relationship):
            if case .null = field { return .null }
            if case .string(let text) = field { return .objectID(try objectID(text, relationship, place: place, linkExists: linkExists)) }
            throw relationshipMismatch(property.name, relationship, place: place)
        case .link(let relationship):
            if case .null = field { return .null }
            if relationship.isToMany, case .nested(.array(let items)) = field {
                return .array(try items.map { item in
                    guard case .string(var uri) = item else {
                        throw TributaryError(.typeMismatch, "'\(property.name)' of \(entity.name) lists object ID URIs, not \(item.kindName)", location: place.description, hint: "give [\"tributary://<store>/\(relationship.destinationEntity)/p1\"]")
                    }
                    return .objectID(try uri.withUTF8 { try objectID($0, relationship, place: place, linkExists: linkExists) })
                })
            }
            if !relationship.isToMany, case .string(let text) = field { return .objectID(try objectID(text, relationship, place: place, linkExists: linkExists)) }
            throw relationshipMismatch(property.name, relationship, place: place)
        }
    }

    private func relationshipMismatch(_ name: String, _ relationship: RelationshipDescription, place: NDJSONPlace) -> TributaryError {
        TributaryError(.typeMismatch, "'\(name)' of \(entity.name) is a relationship to \(relationship.destinationEntity) and needs \(relationship.isToMany ? "a list of object ID URIs" : "an object ID URI")", location: place.description,
                       hint: "object IDs look like tributary://<store>/\(relationship.destinationEntity)/p1")
    }

    /// An object ID of this store, of the relationship's destination, that exists (when asked).
    private func objectID(_ text: UnsafeBufferPointer<UInt8>, _ relationship: RelationshipDescription, place: NDJSONPlace, linkExists: ((ObjectID) throws -> Bool)?) throws -> ObjectID {
        let uri = String(decoding: text, as: UTF8.self)
        let name = "'\(relationship.name)' of \(entity.name)"
        guard let id = ObjectID(uriRepresentation: uri) else {
            throw TributaryError(.typeMismatch, "\(name) needs an object ID URI, and \"\(uri.prefix(60))\" is not one", location: place.description, hint: "object IDs look like tributary://<store>/\(relationship.destinationEntity)/p1")
        }
        guard id.storeID == storeID else {
            throw TributaryError(.invalidInput, "\(name) links to \(uri), an object of another store", location: place.description, hint: "give object IDs of this store (tributary://\(storeID.lowercasedString)/…); IDs do not carry over between stores")
        }
        guard id.entityName == relationship.destinationEntity else {
            throw TributaryError(.typeMismatch, "\(name) links to \(uri), which is not a \(relationship.destinationEntity)", location: place.description, hint: "give object IDs of \(relationship.destinationEntity) objects")
        }
        if let linkExists, try !linkExists(id) {
            throw TributaryError(.invalidInput, "\(name) links to \(uri), which does not exist", location: place.description, hint: "import the \(relationship.destinationEntity) objects first, or leave the link out")
        }
        return id
    }

    /// The value of an attribute, from the JSON forms each type accepts.
    @inline(__always)
    private func attributeValue(_ field: NDJSONField, _ type: AttributeType, _ index: Int, place: NDJSONPlace) throws -> AttributeValue {
        let value: AttributeValue?
        switch (field, type) {
        case (.null, _): return .null
        case (.string(let s), .string): value = .string(String(decoding: s, as: UTF8.self))
        case (.integer(let i), .integer): value = .integer(i)
        case (.integer(let i), .double): value = .double(Double(i))
        case (.double(let d), .double): value = .double(d)
        case (.bool(let b), .bool): value = .bool(b)
        case (.string(let s), .date): value = ISO8601.date(utf8: s).map { .date($0) }
        case (.integer(let i), .date): value = try date(Double(i), index, place: place)
        case (.double(let d), .date): value = try date(d, index, place: place)
        case (.string(let s), .uuid): value = UUID(uuidString: String(decoding: s, as: UTF8.self)).map { .uuid($0) }
        case (.string(let s), .binary): value = Data(base64Encoded: String(decoding: s, as: UTF8.self)).map { .data($0) }
        default: value = nil
        }
        guard let value else {
            throw TributaryError(.typeMismatch, "'\(properties[index].name)' of \(entity.name) is a \(type.rawValue), not \(field.kindName)\(Self.preview(field))", location: place.description, hint: type.formatHint)
        }
        if case .date(let date) = value, !Self.dateRange.contains(date.timeIntervalSince1970) {
            throw dateOutOfRange(index, ISO8601.string(from: date), place: place)
        }
        return value
    }

    /// Seconds since 1970 as a date, within the supported range.
    private func date(_ seconds: Double, _ index: Int, place: NDJSONPlace) throws -> AttributeValue {
        guard Self.dateRange.contains(seconds) else { throw dateOutOfRange(index, "\(seconds)", place: place) }
        return .date(Date(timeIntervalSince1970: seconds))
    }

    private func dateOutOfRange(_ index: Int, _ text: String, place: NDJSONPlace) -> TributaryError {
        TributaryError(.typeMismatch, "'\(properties[index].name)' of \(entity.name) is a date, and \(text) is outside the supported range (years 0 to 9999)", location: place.description, hint: AttributeType.date.formatHint)
    }

    private static func preview(_ field: NDJSONField) -> String {
        switch field {
        case .string(let s): return " (\"\(String(decoding: s, as: UTF8.self).prefix(30))\")"
        case .integer(let i): return " (\(i))"
        case .double(let d): return " (\(d))"
        case .bool(let b): return " (\(b))"
        default: return ""
        }
    }
}

/// One decoded line: a value per property of the decoder, and which were given.
struct NDJSONRow {
    var values: [AttributeValue]
    /// Bit i: property i was given.
    var mask: UInt64 = 0
    /// Whether a relationship kept outside the row (to-many, inverse to-one) was given.
    var hasLinks = false

    init(count: Int) {
        values = Array(repeating: .null, count: count)
    }

    mutating func clear() {
        mask = 0
        hasLinks = false
    }

    @inline(__always) func has(_ index: Int) -> Bool { mask & (1 << UInt64(index)) != 0 }
}

/// Where a line is, for errors: built into text only when one is thrown.
struct NDJSONPlace: CustomStringConvertible {
    let file: String
    let line: Int?

    var description: String { line.map { "\(file):\($0)" } ?? file }
}
