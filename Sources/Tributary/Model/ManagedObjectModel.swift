import Foundation

/// A model: the entities of a store. Written with the Swift DSL or a YAML file;
/// both produce the same value, which the store caches with its version hash.
///
/// ```swift
/// let model = try ManagedObjectModel {
///     Entity("Post") {
///         Attribute("title", .string, optional: false)
///         Relationship("tags", to: "Tag", inverse: "posts", toMany: true)
///     }
///     Entity("Tag") {
///         Attribute("name", .string, optional: false)
///         Relationship("posts", to: "Post", inverse: "tags", toMany: true)
///         Unique("name")
///     }
/// }
/// let same = try ManagedObjectModel(yamlFile: URL(fileURLWithPath: "model.yml"))
/// ```
public struct ManagedObjectModel: Sendable, Codable, Hashable {
    /// The entities, in declaration order.
    public private(set) var entities: [EntityDescription]

    /// A validated model from entity descriptions. Each default is converted to its
    /// attribute's type in the form the store caches (`default: 0` on a double attribute
    /// becomes `0.0`, a date keeps whole milliseconds, a `.null` default is no default),
    /// so the model equals the one read back from its store.
    public init(entities: [EntityDescription]) throws {
        self.entities = entities.map(Self.normalizingDefaults)
        try validate()
    }

    /// `entity` with each default as its attribute's type, as it reads back from its stored text.
    static func normalizingDefaults(_ entity: EntityDescription) -> EntityDescription {
        var entity = entity
        for index in entity.attributes.indices {
            guard let value = entity.attributes[index].defaultValue else { continue }
            let type = entity.attributes[index].type
            if value.isNull {
                entity.attributes[index].defaultValue = nil
            } else if let coerced = value.coerced(to: type), let stored = try? AttributeValue.parse(coerced.storedText, as: type) {
                entity.attributes[index].defaultValue = stored
            }  // otherwise left for validate() to report
        }
        return entity
    }

    /// The entity named `name`.
    public func entity(named name: String) -> EntityDescription? {
        entities.first { $0.name == name }
    }

    /// Makes `type` the class of its entity's objects (for models read from YAML; the DSL's
    /// `Entity(Quake.self)` does it itself). A coordinator made with the model uses it.
    ///
    /// ```swift
    /// var model = try ManagedObjectModel(yamlFile: url)
    /// try model.registerSubclass(Quake.self)
    /// ```
    public mutating func registerSubclass<T: EntityNamed>(_ type: T.Type) throws {
        guard let index = entities.firstIndex(where: { $0.name == T.entityName }) else {
            throw TributaryError(.unknownEntity, "\(T.self) names entity '\(T.entityName)', which the model does not have", hint: "the model has \(entities.map(\.name).joined(separator: ", "))")
        }
        entities[index].managedObjectClass = type
    }

    /// The entity named `name`, or an error listing the entities there are.
    public func requireEntity(_ name: String) throws -> EntityDescription {
        guard let entity = entity(named: name) else {
            throw TributaryError(.unknownEntity, "unknown entity '\(name)'", hint: "the model has \(entities.map(\.name).joined(separator: ", "))")
        }
        return entity
    }

    /// The model as canonical JSON (sorted keys), the form cached in the store.
    public func canonicalJSON() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Encoding plain structs of strings, bools and arrays cannot fail.
        return (try? encoder.encode(self)) ?? Data()
    }

    /// A hash of the canonical JSON: equal models have equal hashes.
    public var versionHash: String {
        var hash: UInt64 = 0xcbf29ce484222325
        for byte in canonicalJSON() {
            hash ^= UInt64(byte)
            hash = hash &* 0x100000001b3
        }
        return String(format: "%016llx", hash)
    }

    /// Decodes a model from its canonical JSON.
    /// JSON that is not a model throws ``TributaryError/Code/invalidModel`` saying what is wrong.
    public static func fromJSON(_ data: Data) throws -> ManagedObjectModel {
        let model: ManagedObjectModel
        do {
            model = try JSONDecoder().decode(ManagedObjectModel.self, from: data)
        } catch let error as DecodingError {
            throw TributaryError(.invalidModel, "the model's JSON is damaged: \(error.shortDescription)")
        }
        try model.validate()
        return model
    }

    // MARK: Validation

    static let maximumColumns = 64

    func validate() throws {
        func fail(_ message: String, _ place: String, hint: String? = nil) -> TributaryError {
            TributaryError(.invalidModel, message, location: place, hint: hint)
        }
        guard !entities.isEmpty else { throw fail("the model has no entities", "model", hint: "declare at least one entity") }
        var seen = Set<String>()
        for entity in entities {
            // An adopted table keeps the names another program gave it.
            let isNameValid = entity.tableKey == nil ? Self.isValidName : Self.isAdoptableName
            let nameHint = entity.tableKey == nil ? "use letters, digits and _, starting with a letter" : "an adopted table's names cannot hold . / ` or control characters, nor start with $ or @, nor be _pk, _version or start with _tributary or __"
            guard isNameValid(entity.name) else {
                throw fail("'\(entity.name)' is not a valid entity name", "entity \(entity.name)", hint: nameHint)
            }
            guard seen.insert(entity.name.lowercased()).inserted else {
                throw fail("entity '\(entity.name)' is declared twice", "entity \(entity.name)")
            }
            var names = Set<String>()
            for name in entity.propertyNames {
                guard isNameValid(name) else {
                    throw fail("'\(name)' is not a valid property name", "entity \(entity.name)", hint: nameHint)
                }
                guard names.insert(name.lowercased()).inserted else {
                    throw fail("property '\(name)' is declared twice", "entity \(entity.name)")
                }
            }
            let columns = entity.attributes.count + entity.relationships.filter { !$0.isToMany }.count
            guard columns <= Self.maximumColumns else {
                throw fail("entity has \(columns) columns, more than \(Self.maximumColumns)", "entity \(entity.name)", hint: "split it into related entities")
            }
            if let key = entity.tableKey { try Self.checkAdopted(entity, key: key) }
            else if entity.isWithoutRowid {
                throw fail("only an adopted table (one with a tableKey) can be WITHOUT ROWID", "entity \(entity.name)", hint: "remove withoutRowid")
            } else if !entity.declaredKey.isEmpty {
                throw fail("only an adopted table (one with a tableKey) has a declared key", "entity \(entity.name)", hint: "remove declaredKey")
            }
            try Self.checkRenamingIdentifiers(of: entity)
            for attribute in entity.attributes {
                if let value = attribute.defaultValue, !value.isNull, value.coerced(to: attribute.type) == nil {
                    throw fail("default \(value) is not a \(attribute.type.rawValue)", "\(entity.name).\(attribute.name)", hint: attribute.type.formatHint)
                }
            }
            for constraint in entity.uniquenessConstraints + entity.indexes {
                guard !constraint.isEmpty else { throw fail("an empty unique constraint or index", "entity \(entity.name)") }
                for name in constraint where entity.attribute(named: name) == nil && entity.relationship(named: name).map({ $0.isToMany }) != false {
                    throw fail("unique constraint or index names '\(name)', which is not an attribute or to-one relationship", "entity \(entity.name)")
                }
            }
        }
        for entity in entities {
            for relationship in entity.relationships {
                let place = "\(entity.name).\(relationship.name)"
                guard let destination = entity.name == relationship.destinationEntity ? entity : self.entity(named: relationship.destinationEntity) else {
                    throw fail("relationship points to unknown entity '\(relationship.destinationEntity)'", place)
                }
                guard let inverse = destination.relationship(named: relationship.inverseName) else {
                    throw fail("inverse '\(relationship.inverseName)' does not exist on \(destination.name)", place, hint: "declare the inverse relationship on \(destination.name)")
                }
                guard inverse.destinationEntity == entity.name, inverse.inverseName == relationship.name else {
                    throw fail("inverse \(destination.name).\(inverse.name) does not point back to \(place)", place)
                }
                if inverse.name == relationship.name && destination.name == entity.name && relationship.isToMany != inverse.isToMany {
                    throw fail("a relationship that is its own inverse must be to-many on both ends", place)
                }
                if entity.tableKey != nil || destination.tableKey != nil {
                    try Self.checkAdoptedRelationship(relationship, of: entity, inverse: inverse, destination: destination)
                }
            }
        }
        try validateDerivedAttributes()
        try StoreSchema(model: self).checkObjectNames()
    }

    /// Every `renamedFrom` is a name the entity or property could have had.
    private static func checkRenamingIdentifiers(of entity: EntityDescription) throws {
        let named = [("entity \(entity.name)", entity.renamingIdentifier)]
            + entity.attributes.map { ("\(entity.name).\($0.name)", $0.renamingIdentifier) }
            + entity.relationships.map { ("\(entity.name).\($0.name)", $0.renamingIdentifier) }
        for case let (place, old?) in named where !isValidName(old) {
            throw TributaryError(.invalidModel, "renamedFrom '\(old)' is not a valid name", location: place, hint: "give the old name: letters, digits and _, starting with a letter")
        }
    }

    /// What an adopted table (one with a ``EntityDescription/tableKey``) cannot have yet.
    private static func checkAdopted(_ entity: EntityDescription, key: String) throws {
        let place = "entity \(entity.name)"
        guard !key.isEmpty, entity.attribute(named: key) == nil, entity.relationship(named: key) == nil else {
            throw TributaryError(.invalidModel, "the table key '\(key)' must be a column of its own, not an attribute or relationship", location: place,
                                 hint: "remove the property or name another key")
        }
        for name in entity.declaredKey where entity.attribute(named: name) == nil {
            throw TributaryError(.invalidModel, "the declared key names '\(name)', which is not an attribute", location: place, hint: "list the attributes of the table's PRIMARY KEY")
        }
        if Set(entity.declaredKey.map { $0.lowercased() }).count != entity.declaredKey.count {
            throw TributaryError(.invalidModel, "the declared key names an attribute twice: \(entity.declaredKey.joined(separator: ", "))", location: place,
                                 hint: "list each attribute of the table's PRIMARY KEY once")
        }
        if entity.isWithoutRowid, entity.declaredKey.isEmpty || !RowidName.contains(key) {
            throw TributaryError(.invalidModel, "a WITHOUT ROWID table needs its PRIMARY KEY as declaredKey and a rowid name as tableKey", location: place,
                                 hint: "adopt the table again rather than editing its entity")
        }
        if entity.attributes.contains(where: \.isDerived) {
            throw TributaryError(.invalidModel, "an adopted table cannot have derived attributes", location: place, hint: "compute the value in a view or in the program that writes it")
        }
    }

    /// A name a model declares: letters, digits and `_`, starting with a letter.
    static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.properties.isAlphabetic, first.isASCII else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") }
    }

    /// The characters an adopted table's or column's name cannot hold: `.` and `/` separate
    /// key paths and object references, a backtick quotes a name in a predicate, and a control
    /// character has no printable form. Any other name another program gave works quoted
    /// (`Order Details`, `unit-price`).
    static let unadoptableCharacters = CharacterSet(charactersIn: "./`").union(.controlCharacters)

    /// Names Tributary gives fields of its own beside a row's columns (in stream records and
    /// the PostgreSQL mirror), compared without case as SQLite compares names.
    static let reservedNames: Set<String> = ["_pk", "_version"]

    /// Why an adopted table or column cannot have `name`, or nil when it can: any text
    /// without ``unadoptableCharacters`` that is not one of Tributary's own names.
    static func adoptionProblem(ofName name: String) -> String? {
        let lower = name.lowercased()
        if name.isEmpty { return "has an empty name" }
        if reservedNames.contains(lower) || lower.hasPrefix("_tributary") || lower.hasPrefix("__") {
            return "has a name Tributary uses for its own fields"
        }
        if !name.unicodeScalars.allSatisfy({ !unadoptableCharacters.contains($0) }) {
            return "has a name holding . / ` or a control character, which key paths and object IDs cannot carry"
        }
        if name.hasPrefix("$") || name.hasPrefix("@") {
            return "has a name starting with $ or @, which a predicate reads as a variable or an operator"
        }
        return nil
    }

    /// A name an adopted table or column may have (``adoptionProblem(ofName:)``).
    static func isAdoptableName(_ name: String) -> Bool { adoptionProblem(ofName: name) == nil }

    /// Whether `name` must be quoted (`` `Order Details` ``) in a predicate or a sort key.
    /// A bare key-path part is letters, digits, `_`, `$` and `@`, not starting with a digit.
    package static func needsQuoting(_ name: String) -> Bool {
        guard let first = name.first, !first.isNumber else { return true }
        return !name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "$" || $0 == "@" }
    }
}
