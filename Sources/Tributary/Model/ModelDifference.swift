/// What differs between two models, in words and by entity: what a schema transaction
/// says when the model changed by another way than a planned migration (an adoption run
/// again, a table another program altered).
///
/// ```swift
/// let difference = ModelDifference(from: old, to: new)
/// print(difference.changes)   // ["added Post.views", "removed entity Draft"]
/// ```
struct ModelDifference: Equatable {
    /// One item a change: `added entity Comment`, `added Post.views`, `removed Post.legacy`,
    /// `changed Post.views from integer to double`, `added index Post(title)`,
    /// `changed notes.owner_id from integer to a relationship to users`.
    private(set) var changes: [String] = []
    /// The entities whose description changed, added and removed ones included, sorted.
    private(set) var entities: [String] = []

    init(from old: ManagedObjectModel, to new: ManagedObjectModel) {
        for entity in new.entities {
            guard let before = old.entity(named: entity.name) else {
                note("added entity \(entity.name)", entity.name)
                continue
            }
            guard before != entity else { continue }
            compare(before, entity)
        }
        for entity in old.entities where new.entity(named: entity.name) == nil {
            note("removed entity \(entity.name)", entity.name)
        }
        entities.sort()
    }

    private mutating func compare(_ old: EntityDescription, _ new: EntityDescription) {
        let name = new.name
        let count = changes.count
        compareAttributes(old, new)
        compareRelationships(old, new)
        for index in new.indexes where !old.indexes.contains(index) { changes.append("added index \(name)(\(index.joined(separator: ", ")))") }
        for index in old.indexes where !new.indexes.contains(index) { changes.append("removed index \(name)(\(index.joined(separator: ", ")))") }
        if Set(old.uniquenessConstraints) != Set(new.uniquenessConstraints) { changes.append("changed the unique constraints of \(name)") }
        if old.tableKey != new.tableKey { changes.append("changed the key of \(name) to \(new.tableKey ?? "_pk")") }
        if old.isWithoutRowid != new.isWithoutRowid { changes.append(new.isWithoutRowid ? "made \(name) a WITHOUT ROWID table" : "made \(name) a rowid table") }
        if old.declaredKey != new.declaredKey {
            changes.append(new.declaredKey.isEmpty ? "removed the declared key of \(name)" : "changed the declared key of \(name) to (\(new.declaredKey.joined(separator: ", ")))")
        }
        if changes.count == count { changes.append("changed \(name)") }
        entities.append(name)
    }

    /// Attributes added, removed or changed; an attribute that became a to-one relationship
    /// (an adopted table's foreign-key column adopted again) or the reverse is one change.
    private mutating func compareAttributes(_ old: EntityDescription, _ new: EntityDescription) {
        let name = new.name
        for attribute in new.attributes {
            guard let before = old.attribute(named: attribute.name) else {
                let was = old.relationship(named: attribute.name)
                changes.append(was.map { "changed \(name).\(attribute.name) from a relationship to \($0.destinationEntity) to \(attribute.type.rawValue)" } ?? "added \(name).\(attribute.name)")
                continue
            }
            if before.type != attribute.type { changes.append("changed \(name).\(attribute.name) from \(before.type.rawValue) to \(attribute.type.rawValue)") }
            else if before != attribute { changes.append("changed \(name).\(attribute.name)") }
        }
        for attribute in old.attributes where new.attribute(named: attribute.name) == nil {
            let now = new.relationship(named: attribute.name)
            changes.append(now.map { "changed \(name).\(attribute.name) from \(attribute.type.rawValue) to a relationship to \($0.destinationEntity)" } ?? "removed \(name).\(attribute.name)")
        }
    }

    /// Relationships added, removed or changed (those that were or became attributes aside).
    private mutating func compareRelationships(_ old: EntityDescription, _ new: EntityDescription) {
        let name = new.name
        for relationship in new.relationships where old.relationship(named: relationship.name) != relationship && old.attribute(named: relationship.name) == nil {
            changes.append("\(old.relationship(named: relationship.name) == nil ? "added" : "changed") \(name).\(relationship.name)")
        }
        for relationship in old.relationships where new.relationship(named: relationship.name) == nil && new.attribute(named: relationship.name) == nil {
            changes.append("removed \(name).\(relationship.name)")
        }
    }

    private mutating func note(_ change: String, _ entity: String) {
        changes.append(change)
        entities.append(entity)
    }
}
