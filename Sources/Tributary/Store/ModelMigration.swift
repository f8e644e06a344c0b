/// The difference between the model cached in a store and the model it is opened
/// with: either additive steps to apply in place, or the first incompatible change.
struct ModelMigration {
    /// SQL to run, in order, with arguments.
    var steps: [(sql: String, arguments: [AttributeValue])] = []
    /// `UPDATE`s computing new or changed derived attributes, run after the triggers are rebuilt.
    var backfills: [String] = []

    /// Plans a migration from `old` to `new`; throws `incompatibleModel` naming
    /// the first change that cannot be applied in place.
    init(from old: ManagedObjectModel, to new: ManagedObjectModel) throws {
        func incompatible(_ what: String) -> TributaryError {
            TributaryError(.incompatibleModel, "the model differs from the store's: \(what)",
                           hint: "only new entities, new optional, defaulted or derived attributes, new relationships and new indexes migrate in place; open the store with its own model (tributary model STORE prints it) or export and replay into a new store")
        }
        let schema = StoreSchema(model: new)
        for oldEntity in old.entities {
            guard let entity = new.entity(named: oldEntity.name) else { throw incompatible("entity \(oldEntity.name) was removed") }
            for oldAttribute in oldEntity.attributes {
                guard let attribute = entity.attribute(named: oldAttribute.name) else { throw incompatible("attribute \(oldEntity.name).\(oldAttribute.name) was removed") }
                if attribute.type != oldAttribute.type { throw incompatible("attribute \(oldEntity.name).\(oldAttribute.name) changed type from \(oldAttribute.type.rawValue) to \(attribute.type.rawValue)") }
                if attribute.isOptional != oldAttribute.isOptional { throw incompatible("attribute \(oldEntity.name).\(oldAttribute.name) changed optionality") }
                if attribute.defaultValue != oldAttribute.defaultValue { throw incompatible("attribute \(oldEntity.name).\(oldAttribute.name) changed its default") }
                if attribute.isExcludedFromHistory != oldAttribute.isExcludedFromHistory { throw incompatible("attribute \(oldEntity.name).\(oldAttribute.name) changed excludedFromHistory") }
                if attribute.isDerived != oldAttribute.isDerived { throw incompatible("attribute \(oldEntity.name).\(oldAttribute.name) changed between stored and derived") }
            }
            for oldRelationship in oldEntity.relationships {
                guard let relationship = entity.relationship(named: oldRelationship.name) else { throw incompatible("relationship \(oldEntity.name).\(oldRelationship.name) was removed") }
                if relationship != oldRelationship { throw incompatible("relationship \(oldEntity.name).\(oldRelationship.name) changed") }
            }
            if Set(entity.uniquenessConstraints) != Set(oldEntity.uniquenessConstraints) {
                throw incompatible("the unique constraints of \(oldEntity.name) changed")
            }
            for index in oldEntity.indexes where !entity.indexes.contains(index) {
                throw incompatible("index \(oldEntity.name)(\(index.joined(separator: ", "))) was removed")
            }
            if entity.attributes.prefix(oldEntity.attributes.count).map(\.name) != oldEntity.attributes.map(\.name) {
                throw incompatible("attributes of \(oldEntity.name) were reordered; add new attributes after the existing ones")
            }
            // Additive steps for an existing entity.
            for attribute in entity.attributes where oldEntity.attribute(named: attribute.name) == nil {
                guard attribute.isOptional || attribute.defaultValue != nil || attribute.isDerived else {
                    throw incompatible("new attribute \(entity.name).\(attribute.name) is required and has no default")
                }
                steps.append(("ALTER TABLE \(quote(entity.name)) ADD COLUMN \(quote(attribute.name)) \(attribute.type.sqlType)\(DerivedAttributeTriggers.columnDefault(attribute, canBeNonConstant: false))", []))
                if let value = attribute.defaultValue, !value.isNull {
                    steps.append(("UPDATE \(quote(entity.name)) SET \(quote(attribute.name)) = ?", [value.coerced(to: attribute.type) ?? value]))
                }
            }
            let table = schema.tables[entity.name]!
            for relationship in table.foreignKeys where oldEntity.relationship(named: relationship.name) == nil {
                steps.append(("ALTER TABLE \(quote(entity.name)) ADD COLUMN \(quote(relationship.name)) INTEGER", []))
                steps.append((schema.foreignKeyIndex(entity.name, relationship.name), []))
            }
            for index in entity.indexes where !oldEntity.indexes.contains(index) {
                steps.append((schema.plainIndex(entity.name, index), []))
            }
        }
        for entity in new.entities where old.entity(named: entity.name) == nil {
            for sql in schema.createStatements(for: entity) { steps.append((sql, [])) }
        }
        // Join tables of relationships that did not exist before.
        for entity in new.entities {
            let oldEntity = old.entity(named: entity.name)
            for sql in schema.joinTableStatements(for: entity) {
                let isNew = entity.relationships.contains { relationship in
                    sql.contains(quote("_\(entity.name)_\(relationship.name)")) && oldEntity?.relationship(named: relationship.name) == nil
                }
                if isNew { steps.append((sql, [])) }
            }
        }
        // New or changed derived attributes, computed for the rows already there once
        // the triggers are rebuilt (StoreMetadata does, between steps and backfills).
        let triggers = DerivedAttributeTriggers(schema: schema)
        for entity in new.entities {
            for attribute in entity.attributes where attribute.isDerived {
                guard old.entity(named: entity.name)?.attribute(named: attribute.name)?.derivation != attribute.derivation else { continue }
                backfills.append(triggers.backfillStatement(for: attribute, of: entity))
            }
        }
    }
}
