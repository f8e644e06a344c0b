import Foundation

/// Checks and converts values given for an entity's properties, with errors that
/// say which row, which key and what was expected.
struct ValueValidator {
    let table: StoreSchema.Table
    /// Whether a text, number or blob of another class than its attribute's, which no
    /// conversion keeps, is written as given, for SQLite to store by the column's affinity
    /// (``BatchInsertRequest/writesValuesAsGiven``: a replica written from a stream of what
    /// another program stored); otherwise it is refused.
    var writesValuesAsGiven = false

    /// The value to store for `attribute`, converted to its type.
    @inline(__always)
    func attributeValue(_ value: AttributeValue, _ attribute: AttributeDescription, row: Int?) throws -> AttributeValue {
        switch (value, attribute.type) {
        case (.date(let date), .date):
            return try supportedDate(date, attribute, row: row)
        case (.string, .string), (.integer, .integer), (.double, .double), (.bool, .bool), (.uuid, .uuid), (.data, .binary):
            return value
        case (.null, _):
            guard attribute.isOptional else { throw missing(attribute.name, row: row) }
            return .null
        default:
            let asGiven = writesValuesAsGiven && value.isStoredAsGiven
            guard let converted = value.coerced(to: attribute.type) else {
                if asGiven { return value }
                throw TributaryError(.typeMismatch, "'\(attribute.name)' of \(table.name) is a \(attribute.type.rawValue), and \(value.kindName) \(Self.preview(value)) is not", location: place(row), hint: attribute.type.formatHint)
            }
            guard case .date(let date) = converted else { return converted }
            // Seconds another program stored outside the years Tributary stores, as given.
            if asGiven, !ISO8601.isSupported(date) { return value }
            return try supportedDate(date, attribute, row: row)
        }
    }

    /// `date` if Tributary stores it (``ISO8601/supportedSeconds``); an error naming the attribute otherwise.
    private func supportedDate(_ date: Date, _ attribute: AttributeDescription, row: Int?) throws -> AttributeValue {
        guard ISO8601.isSupported(date) else { throw ISO8601.unsupportedDateError(date.timeIntervalSince1970, attribute: attribute.name, place: place(row)) }
        return .date(date)
    }

    /// The primary key a to-one relationship value points at.
    func targetKey(_ value: AttributeValue, _ relationship: RelationshipDescription, row: Int?) throws -> AttributeValue {
        switch value {
        case .null:
            guard relationship.isOptional else { throw missing(relationship.name, row: row) }
            return .null
        case .objectID(let id) where id.entityName == relationship.destinationEntity:
            return .integer(id.primaryKey)
        case .string(let text):
            if let id = ObjectID(uriRepresentation: text), id.entityName == relationship.destinationEntity { return .integer(id.primaryKey) }
        default:
            break
        }
        throw TributaryError(.typeMismatch, "'\(relationship.name)' of \(table.name) points to \(relationship.destinationEntity), and \(Self.preview(value)) is not an object ID of one", location: place(row),
                             hint: "give an object ID URI such as tributary://<store>/\(relationship.destinationEntity)/p1")
    }

    /// Primary keys of a to-many relationship value (an array of object IDs).
    func targetKeys(_ value: AttributeValue, _ relationship: RelationshipDescription, row: Int?) throws -> [Int64] {
        guard case .array(let items) = value else {
            if value.isNull { return [] }
            throw TributaryError(.typeMismatch, "'\(relationship.name)' of \(table.name) is to-many and needs a list of object IDs", location: place(row), hint: "give [\"tributary://…/\(relationship.destinationEntity)/p1\", …]")
        }
        return try items.map { item in
            guard case .integer(let key) = try targetKey(item, relationship, row: row) else { throw missing(relationship.name, row: row) }
            return key
        }
    }

    func missing(_ name: String, row: Int?) -> TributaryError {
        TributaryError(.missingValue, "'\(name)' of \(table.name) is required and has no value", location: place(row), hint: "give a value for \(name), or make it optional or give it a default in the model")
    }

    func derived(_ name: String, row: Int?) -> TributaryError {
        let derivation = table.entity.attribute(named: name)?.derivation.map { " (\($0))" } ?? ""
        return TributaryError(.derivedAttribute, "'\(name)' of \(table.name) is derived\(derivation) and read-only", location: place(row),
                              hint: "leave \(name) out; the store computes it")
    }

    func unknownKey(_ key: String, row: Int?) -> TributaryError {
        TributaryError(.unknownProperty, "\(table.name) has no attribute or relationship '\(key)'", location: place(row), hint: "\(table.name) has \(table.entity.propertyNames.joined(separator: ", "))")
    }

    func place(_ row: Int?) -> String {
        row.map { "\(table.name) object \($0 + 1)" } ?? table.name
    }

    static func preview(_ value: AttributeValue) -> String {
        let text = value.description
        let short = text.count > 40 ? String(text.prefix(40)) + "…" : text
        if case .string = value { return "\"\(short)\"" }
        return short
    }
}
