extension ManagedObjectModel {
    /// The model as a YAML model file; reading it back gives an equal model.
    ///
    /// ```swift
    /// try ManagedObjectModel(yaml: model.yamlText) == model   // true
    /// ```
    public var yamlText: String {
        var out = "entities:\n"
        for entity in entities {
            out += "  \(Self.yamlName(entity.name)):\n"
            if let key = entity.tableKey { out += "    tableKey: \(Self.yamlString(key))\n" }
            if !entity.declaredKey.isEmpty { out += "    declaredKey: \(Self.yamlList(entity.declaredKey))\n" }
            if entity.isWithoutRowid { out += "    withoutRowid: true\n" }
            if let old = entity.renamingIdentifier { out += "    renamedFrom: \(Self.yamlName(old))\n" }
            if !entity.attributes.isEmpty {
                out += "    attributes:\n"
                for attribute in entity.attributes {
                    var fields = ["type: \(attribute.type.rawValue)"]
                    if !attribute.isOptional { fields.append("optional: false") }
                    if let value = attribute.defaultValue, !value.isNull { fields.append("default: \(Self.yamlString(value.storedText))") }
                    if attribute.isExcludedFromHistory { fields.append("excludedFromHistory: true") }
                    if let derivation = attribute.derivation { fields.append("derived: \(Self.yamlString(derivation.description))") }
                    if let old = attribute.renamingIdentifier { fields.append("renamedFrom: \(Self.yamlName(old))") }
                    out += "      \(Self.yamlName(attribute.name)): { \(fields.joined(separator: ", ")) }\n"
                }
            }
            if !entity.relationships.isEmpty {
                out += "    relationships:\n"
                for relationship in entity.relationships {
                    var fields = ["to: \(Self.yamlName(relationship.destinationEntity))", "inverse: \(Self.yamlName(relationship.inverseName))"]
                    if relationship.isToMany { fields.append("toMany: true") }
                    if relationship.deleteRule != .nullify { fields.append("deleteRule: \(relationship.deleteRule.rawValue)") }
                    if !relationship.isOptional { fields.append("optional: false") }
                    if let old = relationship.renamingIdentifier { fields.append("renamedFrom: \(Self.yamlName(old))") }
                    out += "      \(Self.yamlName(relationship.name)): { \(fields.joined(separator: ", ")) }\n"
                }
            }
            if !entity.uniquenessConstraints.isEmpty {
                out += "    unique: [\(entity.uniquenessConstraints.map(Self.yamlList).joined(separator: ", "))]\n"
            }
            if !entity.indexes.isEmpty {
                out += "    indexes: [\(entity.indexes.map(Self.yamlList).joined(separator: ", "))]\n"
            }
        }
        return out
    }

    /// A name as a YAML key or item: plain when it is a plain word, else quoted (an adopted
    /// table's `Order Details`, `a: b` or `k, l` would not read back).
    static func yamlName(_ name: String) -> String { isValidName(name) ? name : yamlString(name) }

    /// Names as a YAML flow sequence.
    static func yamlList(_ names: [String]) -> String { "[" + names.map(yamlName).joined(separator: ", ") + "]" }

    static func yamlString(_ text: String) -> String {
        var out = ""
        JSONWriter.appendString(text, to: &out)
        return out
    }
}
