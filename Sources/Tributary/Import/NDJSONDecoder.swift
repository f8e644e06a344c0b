import Foundation

/// Turns NDJSON objects into values for an entity: dates as ISO 8601 strings
/// (or seconds since 1970), UUIDs as strings, binary data as base64, to-one
/// relationships as object ID URIs and to-many ones as lists of them. Derived
/// attributes are skipped (the store computes them), so what `tributary query
/// --json` prints imports back.
///
/// ```swift
/// let decoder = try NDJSONDecoder(entity: "Post", store: store)
/// let values = try decoder.decode(line: #"{"title":"Hi"}"#, place: "posts.ndjson:1")
/// ```
public struct NDJSONDecoder: Sendable {
    let entity: EntityDescription

    /// A decoder for rows of `entity` in `store`.
    public init(entity name: String, store: PersistentStore) throws {
        self.entity = try store.schema.table(name).entity
    }

    /// Decodes one line; errors carry `place` (file and line).
    public func decode(line: String, place: String) throws -> [String: AttributeValue] {
        let json: JSONValue
        do {
            json = try JSONValue.parse(line)
        } catch {
            throw TributaryError(.invalidInput, "malformed JSON", location: place, hint: "each line must be one JSON object, such as {\"title\": \"Hello\"}")
        }
        guard case .object(let fields) = json else {
            throw TributaryError(.invalidInput, "expected a JSON object, found \(json.kindName)", location: place, hint: "each line must be one JSON object")
        }
        var values: [String: AttributeValue] = [:]
        values.reserveCapacity(fields.count)
        for (key, field) in fields {
            if entity.attribute(named: key)?.isDerived == true { continue }
            values[key] = try value(field, for: key, place: place)
        }
        return values
    }

    private func value(_ field: JSONValue, for key: String, place: String) throws -> AttributeValue {
        if let attribute = entity.attribute(named: key) {
            if case .null = field { return .null }
            let value: AttributeValue? = switch (field, attribute.type) {
            case (.string(let s), .string): .string(s)
            case (.integer(let i), .integer): .integer(i)
            case (.integer(let i), .double): .double(Double(i))
            case (.double(let d), .double): .double(d)
            case (.bool(let b), .bool): .bool(b)
            case (.string(let s), .date): ISO8601.date(from: s).map { .date($0) }
            case (.integer(let i), .date): .date(Date(timeIntervalSince1970: Double(i)))
            case (.double(let d), .date): .date(Date(timeIntervalSince1970: d))
            case (.string(let s), .uuid): UUID(uuidString: s).map { .uuid($0) }
            case (.string(let s), .binary): Data(base64Encoded: s).map { .data($0) }
            default: nil
            }
            guard let value else {
                throw TributaryError(.typeMismatch, "'\(key)' of \(entity.name) is a \(attribute.type.rawValue), not \(field.kindName)\(Self.preview(field))", location: place, hint: attribute.type.formatHint)
            }
            return value
        }
        if let relationship = entity.relationship(named: key) {
            switch field {
            case .null: return .null
            case .string(let uri) where !relationship.isToMany:
                guard let id = ObjectID(uriRepresentation: uri) else { break }
                return .objectID(id)
            case .array(let items) where relationship.isToMany:
                return .array(try items.map { item in
                    guard case .string(let uri) = item, let id = ObjectID(uriRepresentation: uri) else {
                        throw TributaryError(.typeMismatch, "'\(key)' of \(entity.name) lists object ID URIs, not \(item.kindName)", location: place, hint: "give [\"tributary://<store>/\(relationship.destinationEntity)/p1\"]")
                    }
                    return .objectID(id)
                })
            default: break
            }
            throw TributaryError(.typeMismatch, "'\(key)' of \(entity.name) is a relationship to \(relationship.destinationEntity) and needs \(relationship.isToMany ? "a list of object ID URIs" : "an object ID URI")", location: place,
                                 hint: "object IDs look like tributary://<store>/\(relationship.destinationEntity)/p1")
        }
        throw TributaryError(.unknownProperty, "\(entity.name) has no attribute or relationship '\(key)'", location: place, hint: "\(entity.name) has \(entity.propertyNames.joined(separator: ", "))")
    }

    private static func preview(_ field: JSONValue) -> String {
        switch field {
        case .string(let s): return " (\"\(s.prefix(30))\")"
        case .integer(let i): return " (\(i))"
        case .double(let d): return " (\(d))"
        case .bool(let b): return " (\(b))"
        default: return ""
        }
    }
}
