/// The renames a new model asks of the store's model through `renamedFrom`
/// (Core Data's renaming identifiers), resolved against the store's model.
///
/// A `renamedFrom` applies when the store's model lacks the new name and has the old
/// one, which the new model no longer has; when the store's model has the new name
/// already, it was applied before and is ignored. A `renamedFrom` naming nothing in the
/// store's model (a typo would otherwise drop the old column) or claimed twice is refused.
struct ModelRenames {
    /// Old entity name → new name.
    private(set) var entities: [String: String] = [:]
    /// Per old entity name: old attribute name → new name.
    private(set) var attributes: [String: [String: String]] = [:]
    /// Per old entity name: old relationship name → new name.
    private(set) var relationships: [String: [String: String]] = [:]
    /// What the renames do, in the new model's order: `renamed entity Post to Article`,
    /// `renamed Post.body to Post.content`.
    private(set) var changes: [String] = []

    init(from old: ManagedObjectModel, to new: ManagedObjectModel) throws {
        for entity in new.entities {
            guard let source = try Self.source(entity.name, entity.renamingIdentifier, old: old.entities.map(\.name),
                                               new: new.entities.map(\.name), what: "entity", place: "entity \(entity.name)") else { continue }
            entities[source] = entity.name
            changes.append("renamed entity \(source) to \(entity.name)")
        }
        for entity in new.entities {
            let oldName = self.oldName(ofEntity: entity.name)
            guard let oldEntity = old.entity(named: oldName) else { continue }
            for attribute in entity.attributes {
                guard let source = try Self.source(attribute.name, attribute.renamingIdentifier, old: oldEntity.attributes.map(\.name),
                                                   new: entity.attributes.map(\.name), what: "attribute of \(oldName)", place: "\(entity.name).\(attribute.name)") else { continue }
                attributes[oldName, default: [:]][source] = attribute.name
                changes.append("renamed \(oldName).\(source) to \(entity.name).\(attribute.name)")
            }
            for relationship in entity.relationships {
                guard let source = try Self.source(relationship.name, relationship.renamingIdentifier, old: oldEntity.relationships.map(\.name),
                                                   new: entity.relationships.map(\.name), what: "relationship of \(oldName)", place: "\(entity.name).\(relationship.name)") else { continue }
                relationships[oldName, default: [:]][source] = relationship.name
                changes.append("renamed \(oldName).\(source) to \(entity.name).\(relationship.name)")
            }
        }
    }

    /// The old name a new one is renamed from, or nil when it is not renamed.
    private static func source(_ name: String, _ renamedFrom: String?, old: [String], new: [String], what: String, place: String) throws -> String? {
        guard let renamedFrom, renamedFrom != name, !old.contains(name) else { return nil }
        func refuse(_ message: String, _ hint: String) -> TributaryError {
            TributaryError(.incompatibleModel, message, location: place, hint: hint)
        }
        guard old.contains(renamedFrom) else {
            throw refuse("renamedFrom '\(renamedFrom)' names no \(what) in the store's model", "correct renamedFrom, or remove it to add \(name) as new (tributary model STORE prints the store's model)")
        }
        guard !new.contains(renamedFrom) else {
            throw refuse("renamed from '\(renamedFrom)', which the new model still has", "remove renamedFrom, or rename \(renamedFrom) too")
        }
        return renamedFrom
    }

    var isEmpty: Bool { changes.isEmpty }

    /// The new name of an old entity.
    func newName(ofEntity old: String) -> String { entities[old] ?? old }

    /// The old name of an entity of the new model.
    func oldName(ofEntity new: String) -> String { entities.first { $0.value == new }?.key ?? new }

    /// The new name of a property of an old entity.
    func newName(ofProperty name: String, in oldEntity: String) -> String {
        attributes[oldEntity]?[name] ?? relationships[oldEntity]?[name] ?? name
    }

    /// The old name of a property of an entity of the new model.
    func oldName(ofProperty name: String, in newEntity: String) -> String {
        let oldEntity = oldName(ofEntity: newEntity)
        let renamed = (attributes[oldEntity] ?? [:]).merging(relationships[oldEntity] ?? [:]) { a, _ in a }
        return renamed.first { $0.value == name }?.key ?? name
    }

    /// The store's model with the new names: what the store holds, named as the new model
    /// names it, so that what remains to compare is what changed besides the names.
    func applied(to old: ManagedObjectModel) throws -> ManagedObjectModel {
        let entities = old.entities.map { entity in
            var renamed = entity
            renamed.name = newName(ofEntity: entity.name)
            renamed.attributes = entity.attributes.map { attribute in
                var attribute = attribute
                attribute.name = newName(ofProperty: attribute.name, in: entity.name)
                attribute.derivation = attribute.derivation.map { self.renamed($0, in: entity) }
                return attribute
            }
            renamed.relationships = entity.relationships.map { relationship in
                var relationship = relationship
                relationship.name = newName(ofProperty: relationship.name, in: entity.name)
                relationship.inverseName = newName(ofProperty: relationship.inverseName, in: relationship.destinationEntity)
                relationship.destinationEntity = newName(ofEntity: relationship.destinationEntity)
                return relationship
            }
            renamed.uniquenessConstraints = entity.uniquenessConstraints.map { $0.map { newName(ofProperty: $0, in: entity.name) } }
            renamed.indexes = entity.indexes.map { $0.map { newName(ofProperty: $0, in: entity.name) } }
            return renamed
        }
        return try ManagedObjectModel(entities: entities)
    }

    /// A derivation of an old entity's attribute with the new names of what it reads.
    private func renamed(_ derivation: Derivation, in entity: EntityDescription) -> Derivation {
        let destination = { (relationship: String) in entity.relationship(named: relationship)?.destinationEntity ?? "" }
        func path(_ path: [String]) -> [String] {
            guard let first = path.first else { return path }
            let rest = path.dropFirst().map { newName(ofProperty: $0, in: destination(first)) }
            return [newName(ofProperty: first, in: entity.name)] + rest
        }
        switch derivation {
        case .now: return .now
        case .copy(let p): return .copy(path: path(p))
        case .transform(let transform, let p): return .transform(transform, path: path(p))
        case .aggregate(let aggregate, let relationship, let attribute):
            return .aggregate(aggregate, relationship: newName(ofProperty: relationship, in: entity.name),
                              attribute: attribute.map { newName(ofProperty: $0, in: destination(relationship)) })
        }
    }
}
