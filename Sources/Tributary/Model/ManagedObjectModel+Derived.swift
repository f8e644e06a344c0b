extension ManagedObjectModel {
    /// Checks every derived attribute: its sources exist and have the right kind
    /// and type, and no derived attributes depend on each other in a cycle.
    func validateDerivedAttributes() throws {
        var dependencies: [String: [String]] = [:]
        for entity in entities {
            for attribute in entity.attributes {
                guard let derivation = attribute.derivation else { continue }
                let place = "\(entity.name).\(attribute.name)"
                dependencies[place] = try validate(derivation, of: attribute, in: entity, place: place)
            }
        }
        // A cycle among derived attributes would make the store's triggers chase each other.
        var state: [String: Bool] = [:]   // false: on the path, true: done
        var path: [String] = []
        func visit(_ node: String) throws {
            if let done = state[node] {
                if done { return }
                let cycle = path[path.firstIndex(of: node)!...] + [node]
                throw TributaryError(.invalidModel, "derived attributes depend on each other in a cycle: \(cycle.joined(separator: " → "))",
                                     location: node, hint: "derive one of them from stored attributes only")
            }
            state[node] = false
            path.append(node)
            for next in dependencies[node] ?? [] where dependencies[next] != nil { try visit(next) }
            path.removeLast()
            state[node] = true
        }
        for node in dependencies.keys.sorted() { try visit(node) }
    }

    /// Validates one derivation and returns the `Entity.attribute` names it reads.
    private func validate(_ derivation: Derivation, of attribute: AttributeDescription, in entity: EntityDescription, place: String) throws -> [String] {
        func fail(_ message: String, hint: String? = nil) -> TributaryError {
            TributaryError(.invalidModel, "derived attribute: \(message)", location: place, hint: hint)
        }
        if attribute.defaultValue != nil { throw fail("a derived attribute cannot have a default", hint: "remove 'default'; the store computes the value") }
        if entity.uniquenessConstraints.contains(where: { $0.contains(attribute.name) }) {
            throw fail("a derived attribute cannot be unique", hint: "make a stored attribute unique instead")
        }
        let typeName = attribute.type.rawValue
        switch derivation {
        case .now:
            guard attribute.type == .date else { throw fail("now() gives a date, and the attribute is a \(typeName)", hint: "declare it type: date") }
            return []
        case .copy(let path), .transform(_, let path):
            if path.count == 1, !Self.isValidName(path[0]) {
                _ = try Derivation(parsing: path[0]).description
                throw fail("'\(path[0])' is not a derivation")
            }
            let (sourceEntity, source) = try resolveCopyPath(path, in: entity, fail: fail)
            if source.name == attribute.name && sourceEntity.name == entity.name { throw fail("it derives from itself") }
            if case .transform(let transform, _) = derivation {
                guard source.type == .string, attribute.type == .string else {
                    throw fail("\(transform.rawValue) applies to strings, and \(path.joined(separator: ".")) is a \(source.type.rawValue) (the attribute a \(typeName))", hint: "derive a string attribute from a string")
                }
            } else if source.type != attribute.type {
                throw fail("\(path.joined(separator: ".")) is a \(source.type.rawValue), and the attribute is a \(typeName)", hint: "declare it type: \(source.type.rawValue)")
            }
            return ["\(sourceEntity.name).\(source.name)"]
        case .aggregate(let aggregate, let relationshipName, let attributeName):
            guard let relationship = entity.relationship(named: relationshipName) else {
                throw fail("\(entity.name) has no relationship '\(relationshipName)'", hint: "\(entity.name) has \(entity.relationships.map(\.name).joined(separator: ", "))")
            }
            guard relationship.isToMany else {
                throw fail("@\(aggregate.rawValue) needs a to-many relationship, and \(entity.name).\(relationshipName) is to-one", hint: "copy the value with \(relationshipName).attribute instead")
            }
            let destination = try requireEntity(relationship.destinationEntity)
            guard let attributeName else {
                guard attribute.type == .integer else { throw fail("@count gives an integer, and the attribute is a \(typeName)", hint: "declare it type: integer") }
                return []
            }
            guard let source = destination.attribute(named: attributeName) else {
                throw fail("\(destination.name) has no attribute '\(attributeName)'", hint: "\(destination.name) has \(destination.attributes.map(\.name).joined(separator: ", "))")
            }
            switch aggregate {
            case .sum:
                guard source.type == .integer || source.type == .double else {
                    throw fail("@sum of \(destination.name).\(attributeName), a \(source.type.rawValue): only integers and doubles add up", hint: "use @count, @min or @max")
                }
                guard attribute.type == source.type || attribute.type == .double else {
                    throw fail("@sum of a \(source.type.rawValue) is a \(source.type.rawValue), and the attribute is a \(typeName)", hint: "declare it type: \(source.type.rawValue)")
                }
            case .min, .max:
                guard [.integer, .double, .date, .string].contains(source.type) else {
                    throw fail("@\(aggregate.rawValue) of \(destination.name).\(attributeName), a \(source.type.rawValue), is not defined", hint: "use an integer, double, date or string attribute")
                }
                guard attribute.type == source.type else {
                    throw fail("@\(aggregate.rawValue) of a \(source.type.rawValue) is a \(source.type.rawValue), and the attribute is a \(typeName)", hint: "declare it type: \(source.type.rawValue)")
                }
            case .count:
                break
            }
            return ["\(destination.name).\(attributeName)"]
        }
    }

    /// The entity and attribute a copy path reads: `attribute` or `toOne.attribute`.
    private func resolveCopyPath(_ path: [String], in entity: EntityDescription, fail: (String, String?) -> TributaryError) throws -> (EntityDescription, AttributeDescription) {
        let joined = path.joined(separator: ".")
        switch path.count {
        case 1:
            guard let source = entity.attribute(named: path[0]) else {
                if entity.relationship(named: path[0]) != nil {
                    throw fail("'\(joined)' is a relationship; copy one of its attributes, as in \(joined).name", nil)
                }
                throw fail("\(entity.name) has no attribute '\(joined)'", "\(entity.name) has \(entity.attributes.map(\.name).joined(separator: ", "))")
            }
            return (entity, source)
        case 2:
            guard let relationship = entity.relationship(named: path[0]) else {
                throw fail("\(entity.name) has no relationship '\(path[0])'", "\(entity.name) has \(entity.relationships.map(\.name).joined(separator: ", "))")
            }
            guard !relationship.isToMany else {
                throw fail("\(entity.name).\(path[0]) is to-many, so '\(joined)' has many values", "use an aggregate: \(path[0]).@count, \(path[0]).@sum.\(path[1]), @min or @max")
            }
            let destination = try requireEntity(relationship.destinationEntity)
            guard let source = destination.attribute(named: path[1]) else {
                throw fail("\(destination.name) has no attribute '\(path[1])'", "\(destination.name) has \(destination.attributes.map(\.name).joined(separator: ", "))")
            }
            return (destination, source)
        default:
            throw fail("'\(joined)' goes through more than one relationship", "derive from an attribute or from one to-one relationship's attribute")
        }
    }
}
