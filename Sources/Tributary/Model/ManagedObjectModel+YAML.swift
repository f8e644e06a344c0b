import Foundation
import Yams

extension ManagedObjectModel {
    /// Reads a model from a YAML file. Errors name the file, the line and the key,
    /// and list the keys allowed there.
    ///
    /// ```yaml
    /// entities:
    ///   Tag:
    ///     attributes:
    ///       name: { type: string, optional: false, unique: true }
    ///       color: string
    ///       postCount: { type: integer, derived: posts.@count }
    ///       label: { type: string, renamedFrom: title }   # for tributary migrate
    ///     relationships:
    ///       posts: { to: Post, inverse: tags, toMany: true }
    /// ```
    /// ```swift
    /// let model = try ManagedObjectModel(yamlFile: URL(fileURLWithPath: "examples/blog/model.yml"))
    /// ```
    public init(yamlFile url: URL) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw TributaryError(.fileNotFound, "cannot read model file: there is no file at this path", location: url.path, hint: "check the path given with --model")
        }
        guard !isDirectory.boolValue else {
            throw TributaryError(.invalidModel, "cannot read model file: this is a directory", location: url.path, hint: "give the path of a model file, such as model.yml")
        }
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw TributaryError(.io, "cannot read model file: it cannot be opened", location: url.path, hint: "check its permissions")
        }
        guard let text = String(validating: data, as: UTF8.self) else {
            let offset = Self.firstInvalidUTF8(in: data)
            throw TributaryError(.invalidModel, "the model file is not UTF-8 text (invalid byte at offset \(offset))", location: url.path, hint: "save it as UTF-8")
        }
        try self.init(yaml: text, source: url.path)
    }

    /// The offset of the first byte that does not belong to valid UTF-8 in `data`.
    private static func firstInvalidUTF8(in data: Data) -> Int {
        var offset = 0
        var decoder = UTF8()
        var bytes = data.makeIterator()
        while true {
            switch decoder.decode(&bytes) {
            case .scalarValue(let scalar): offset += UTF8.width(scalar)
            case .emptyInput: return offset
            case .error: return offset
            }
        }
    }

    /// Reads a model from YAML text; `source` names it in errors.
    public init(yaml: String, source: String = "model") throws {
        var reader = ModelYAMLReader(source: source)
        let entities = try reader.read(yaml)
        do {
            try self.init(entities: entities)
        } catch let error as TributaryError {
            throw error.located(source)
        }
    }
}

/// Walks a YAML model document, keeping positions for errors.
struct ModelYAMLReader {
    let source: String

    static let topKeys = ["entities"]
    static let entityKeys = ["attributes", "relationships", "unique", "indexes", "tableKey", "declaredKey", "withoutRowid", "renamedFrom"]
    static let attributeKeys = ["type", "optional", "default", "unique", "excludedFromHistory", "derived", "renamedFrom"]
    static let relationshipKeys = ["to", "inverse", "toMany", "deleteRule", "optional", "renamedFrom"]

    func fail(_ node: Node?, _ message: String, hint: String? = nil) -> TributaryError {
        let line = node?.mark.map { ":\($0.line)" } ?? ""
        return TributaryError(.invalidModel, message, location: source + line, hint: hint)
    }

    mutating func read(_ yaml: String) throws -> [EntityDescription] {
        let root: Node?
        do {
            root = try Yams.compose(yaml: yaml)
        } catch let error as YamlError {
            throw TributaryError(.invalidModel, "not valid YAML: \(Self.describe(error))", location: source, hint: "fix the YAML syntax")
        }
        guard let root, case .mapping(let top) = root else {
            throw fail(root, "a model file is a mapping with an 'entities' key", hint: "start the file with 'entities:'")
        }
        try checkKeys(top, allowed: Self.topKeys, what: "the model")
        guard let entitiesNode = top["entities"], case .mapping(let entities) = entitiesNode else {
            throw fail(root, "'entities' must map entity names to their descriptions", hint: "write 'entities:' followed by indented entity names")
        }
        var result: [EntityDescription] = []
        for (nameNode, body) in entities {
            result.append(try entity(named: try string(nameNode, what: "entity name"), body))
        }
        return result
    }

    private func entity(named name: String, _ node: Node) throws -> EntityDescription {
        var entity = EntityDescription(name: name)
        if case .scalar(let s) = node, s.string.isEmpty || s.string == "~" { return entity }
        guard case .mapping(let body) = node else { throw fail(node, "entity '\(name)' must be a mapping", hint: "allowed keys: \(Self.entityKeys.joined(separator: ", "))") }
        try checkKeys(body, allowed: Self.entityKeys, what: "entity '\(name)'")
        if let attributes = body["attributes"] {
            guard case .mapping(let map) = attributes else { throw fail(attributes, "'attributes' of '\(name)' must map names to types") }
            for (key, value) in map {
                let attributeName = try string(key, what: "attribute name")
                let (attribute, unique) = try self.attribute(attributeName, value, entity: name)
                entity.attributes.append(attribute)
                if unique { entity.uniquenessConstraints.append([attributeName]) }
            }
        }
        if let relationships = body["relationships"] {
            guard case .mapping(let map) = relationships else { throw fail(relationships, "'relationships' of '\(name)' must map names to descriptions") }
            for (key, value) in map {
                entity.relationships.append(try relationship(try string(key, what: "relationship name"), value, entity: name))
            }
        }
        if let unique = body["unique"] { entity.uniquenessConstraints += try nameLists(unique, what: "unique") }
        if let indexes = body["indexes"] { entity.indexes += try nameLists(indexes, what: "indexes") }
        if let key = body["tableKey"] { entity.tableKey = try string(key, what: "'tableKey' of '\(name)'") }
        if let key = body["declaredKey"] { entity.declaredKey = try nameLists(key, what: "declaredKey").flatMap { $0 } }
        if let flag = body["withoutRowid"] { entity.isWithoutRowid = try bool(flag, what: "'withoutRowid' of '\(name)'") }
        if let old = body["renamedFrom"] { entity.renamingIdentifier = try string(old, what: "'renamedFrom' of '\(name)'") }
        return entity
    }

    private func attribute(_ name: String, _ node: Node, entity: String) throws -> (AttributeDescription, Bool) {
        let place = "attribute '\(entity).\(name)'"
        if case .scalar = node {
            return (AttributeDescription(name: name, type: try type(node, place: place)), false)
        }
        guard case .mapping(let map) = node else { throw fail(node, "\(place) must be a type name or a mapping", hint: "allowed keys: \(Self.attributeKeys.joined(separator: ", "))") }
        try checkKeys(map, allowed: Self.attributeKeys, what: place)
        guard let typeNode = map["type"] else { throw fail(node, "\(place) has no 'type'", hint: "add type: string, integer, double, bool, date, uuid or binary") }
        let type = try type(typeNode, place: place)
        var attribute = AttributeDescription(name: name, type: type)
        if let optional = map["optional"] { attribute.isOptional = try bool(optional, what: "'optional' of \(place)") }
        if let excluded = map["excludedFromHistory"] { attribute.isExcludedFromHistory = try bool(excluded, what: "'excludedFromHistory' of \(place)") }
        if let value = map["default"] {
            let text = try string(value, what: "'default' of \(place)")
            do {
                attribute.defaultValue = try AttributeValue.parse(text, as: type)
            } catch let error as TributaryError {
                throw fail(value, "default of \(place): \(error.message)", hint: error.hint)
            }
        }
        if let derived = map["derived"] {
            let text = try string(derived, what: "'derived' of \(place)")
            do {
                attribute.derivation = try Derivation(parsing: text)
            } catch let error as TributaryError {
                throw fail(derived, "\(place): \(error.message)", hint: error.hint)
            }
        }
        if let old = map["renamedFrom"] { attribute.renamingIdentifier = try string(old, what: "'renamedFrom' of \(place)") }
        let unique = try map["unique"].map { try bool($0, what: "'unique' of \(place)") } ?? false
        return (attribute, unique)
    }

    private func relationship(_ name: String, _ node: Node, entity: String) throws -> RelationshipDescription {
        let place = "relationship '\(entity).\(name)'"
        guard case .mapping(let map) = node else { throw fail(node, "\(place) must be a mapping", hint: "allowed keys: \(Self.relationshipKeys.joined(separator: ", "))") }
        try checkKeys(map, allowed: Self.relationshipKeys, what: place)
        guard let to = map["to"] else { throw fail(node, "\(place) has no 'to'", hint: "name the destination entity with to: Entity") }
        guard let inverse = map["inverse"] else { throw fail(node, "\(place) has no 'inverse'", hint: "name the inverse relationship with inverse: name") }
        var relationship = RelationshipDescription(name: name, destinationEntity: try string(to, what: "'to' of \(place)"), inverseName: try string(inverse, what: "'inverse' of \(place)"))
        if let toMany = map["toMany"] { relationship.isToMany = try bool(toMany, what: "'toMany' of \(place)") }
        if let optional = map["optional"] { relationship.isOptional = try bool(optional, what: "'optional' of \(place)") }
        if let old = map["renamedFrom"] { relationship.renamingIdentifier = try string(old, what: "'renamedFrom' of \(place)") }
        if let ruleNode = map["deleteRule"] {
            let text = try string(ruleNode, what: "'deleteRule' of \(place)")
            guard let rule = DeleteRule(rawValue: text.lowercased()) else {
                throw fail(ruleNode, "unknown delete rule '\(text)' for \(place)", hint: "use nullify, cascade or deny")
            }
            relationship.deleteRule = rule
        }
        return relationship
    }

    private func type(_ node: Node, place: String) throws -> AttributeType {
        let text = try string(node, what: "type of \(place)")
        guard let type = AttributeType.named(text) else {
            throw fail(node, "unknown type '\(text)' for \(place)", hint: "use string, integer, double, bool, date, uuid or binary")
        }
        return type
    }

    private func nameLists(_ node: Node, what: String) throws -> [[String]] {
        guard case .sequence(let items) = node else { throw fail(node, "'\(what)' must be a list", hint: "write [[a], [b, c]] or [a, b]") }
        return try items.map { item in
            if case .sequence(let inner) = item { return try inner.map { try string($0, what: what) } }
            return [try string(item, what: what)]
        }
    }

    private func checkKeys(_ map: Node.Mapping, allowed: [String], what: String) throws {
        for (key, _) in map {
            let name = key.string ?? ""
            if !allowed.contains(name) {
                throw fail(key, "unknown key '\(name)' in \(what)", hint: "allowed keys: \(allowed.joined(separator: ", "))")
            }
        }
    }

    private func string(_ node: Node, what: String) throws -> String {
        guard case .scalar(let scalar) = node else { throw fail(node, "\(what) must be a single value") }
        return scalar.string
    }

    private func bool(_ node: Node, what: String) throws -> Bool {
        guard case .scalar(let scalar) = node else { throw fail(node, "\(what) must be true or false") }
        switch scalar.string.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw fail(node, "\(what) must be true or false, not '\(scalar.string)'")
        }
    }

    static func describe(_ error: YamlError) -> String {
        let text = "\(error)"
        return text.split(separator: "\n").first.map(String.init) ?? text
    }
}
