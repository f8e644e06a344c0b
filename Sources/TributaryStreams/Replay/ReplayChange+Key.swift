import Tributary

extension ReplayChange {
    /// The values of a record's `key` object (``key``), read for `entity`'s attribute types
    /// as the record's values are (``convert(_:to:name:)``); empty when the record has none.
    /// A name the entity does not have is `unknownProperty`.
    static func declaredKey(_ value: JSONValue?, of entity: EntityDescription) throws -> [String: AttributeValue] {
        guard let value, value != .null else { return [:] }
        guard case .object(let fields) = value else { throw bad("the key of a \(entity.name) record is not an object") }
        var key: [String: AttributeValue] = [:]
        for (name, field) in fields {
            guard let attribute = entity.attribute(named: name) else {
                throw TributaryError(.unknownProperty, "the key of a \(entity.name) record names '\(name)', which \(entity.name) does not have",
                                     hint: modelHint)
            }
            key[name] = try convert(field, to: attribute.type, name: name)
        }
        return key
    }
}
