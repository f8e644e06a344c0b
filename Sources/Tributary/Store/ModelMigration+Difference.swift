extension ModelMigration {
    /// A change between the store's model (with the new model's names, ``ModelRenames``) and
    /// a new model that opening cannot apply in place: only an explicit migration can, or
    /// nothing can (then ``impossible`` says what to do instead). (``ModelDifference`` says
    /// in words what differs between any two models, for schema history.)
    struct Difference {
        enum Kind: Equatable {
            case entityRemoved
            case attributeRemoved
            case typeChanged(from: AttributeType, to: AttributeType)
            /// The attribute became optional (true) or required (false).
            case optionality(Bool)
            case defaultChanged
            case historyExclusion
            case derivation
            case relationshipRemoved
            case relationshipChanged
            case deleteRule(DeleteRule)
            case uniqueness
            case indexRemoved([String])
            case requiredAdded
        }

        let kind: Kind
        /// The entity, as the new model names it.
        let entity: String
        /// The attribute or relationship, as the new model names it (nil for the entity itself).
        var property: String?
        /// What changed, as a refusal says it: `attribute Note.text changed type from string to integer`.
        let what: String
        /// Why no migration can make the change, and what to do; nil when an explicit one can.
        var impossible: String?

        /// Every difference from `before` (the store's model, renamed) to `new`, in model order.
        static func all(from before: ManagedObjectModel, to new: ManagedObjectModel) -> [Difference] {
            var found: [Difference] = []
            for oldEntity in before.entities {
                guard let entity = new.entity(named: oldEntity.name) else {
                    found.append(Difference(kind: .entityRemoved, entity: oldEntity.name, what: "entity \(oldEntity.name) was removed"))
                    continue
                }
                for oldAttribute in oldEntity.attributes {
                    found += attributeDifferences(oldAttribute, entity.attribute(named: oldAttribute.name), in: entity.name)
                }
                for oldRelationship in oldEntity.relationships {
                    found += relationshipDifferences(oldRelationship, entity.relationship(named: oldRelationship.name), in: entity.name)
                }
                found += constraintDifferences(oldEntity, entity)
                for attribute in entity.attributes where oldEntity.attribute(named: attribute.name) == nil && !(attribute.isOptional || attribute.defaultValue != nil || attribute.isDerived) {
                    found.append(Difference(kind: .requiredAdded, entity: entity.name, property: attribute.name, what: "new attribute \(entity.name).\(attribute.name) is required and has no default",
                                                 impossible: "give it a default or make it optional"))
                }
            }
            return found
        }

        private static func attributeDifferences(_ old: AttributeDescription, _ new: AttributeDescription?, in entity: String) -> [Difference] {
            let place = "\(entity).\(old.name)"
            func difference(_ kind: Kind, _ what: String, impossible: String? = nil) -> Difference {
                Difference(kind: kind, entity: entity, property: old.name, what: "attribute \(place) \(what)", impossible: impossible)
            }
            guard let new else { return [difference(.attributeRemoved, "was removed")] }
            var found: [Difference] = []
            if new.type != old.type {
                let why = old.isDerived || new.isDerived ? "a derived attribute's type cannot change in place; remove it in one migration and add it again in the next"
                    : TypeConversion(from: old.type, to: new.type) == nil ? "SQLite cannot convert \(old.type.rawValue) values to \(new.type.rawValue); add a new attribute, copy the values over with your own program, then remove \(old.name)" : nil
                found.append(difference(.typeChanged(from: old.type, to: new.type), "changed type from \(old.type.rawValue) to \(new.type.rawValue)", impossible: why))
            }
            if new.isOptional != old.isOptional { found.append(difference(.optionality(new.isOptional), "changed optionality")) }
            if new.defaultValue != old.defaultValue { found.append(difference(.defaultChanged, "changed its default")) }
            if new.isExcludedFromHistory != old.isExcludedFromHistory { found.append(difference(.historyExclusion, "changed excludedFromHistory")) }
            if new.isDerived != old.isDerived {
                found.append(difference(.derivation, "changed between stored and derived", impossible: "remove it in one migration and add it again, \(new.isDerived ? "derived" : "stored"), in the next"))
            }
            return found
        }

        private static func relationshipDifferences(_ old: RelationshipDescription, _ new: RelationshipDescription?, in entity: String) -> [Difference] {
            let place = "\(entity).\(old.name)"
            guard var new else { return [Difference(kind: .relationshipRemoved, entity: entity, property: old.name, what: "relationship \(place) was removed")] }
            var old = old
            (old.renamingIdentifier, new.renamingIdentifier) = (nil, nil)
            guard new != old else { return [] }
            let rule = new.deleteRule
            (old.deleteRule, new.deleteRule) = (.nullify, .nullify)
            if new == old { return [Difference(kind: .deleteRule(rule), entity: entity, property: old.name, what: "relationship \(place) changed")] }
            return [Difference(kind: .relationshipChanged, entity: entity, property: old.name, what: "relationship \(place) changed",
                                    impossible: "its destination, inverse, to-many or optionality cannot change in place; remove it in one migration and add a new one in the next")]
        }

        private static func constraintDifferences(_ old: EntityDescription, _ new: EntityDescription) -> [Difference] {
            var found: [Difference] = []
            if Set(new.uniquenessConstraints) != Set(old.uniquenessConstraints) {
                found.append(Difference(kind: .uniqueness, entity: new.name, what: "the unique constraints of \(old.name) changed"))
            }
            for index in old.indexes where !new.indexes.contains(index) {
                found.append(Difference(kind: .indexRemoved(index), entity: new.name, what: "index \(old.name)(\(index.joined(separator: ", "))) was removed"))
            }
            return found
        }
    }
}
