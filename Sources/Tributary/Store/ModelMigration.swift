/// The difference between the model cached in a store and the model it is opened
/// with: either additive steps to apply in place, or the first incompatible change.
struct ModelMigration {
    /// SQL to run, in order, with arguments.
    var steps: [(sql: String, arguments: [AttributeValue])] = []
    /// `UPDATE`s computing new or changed derived attributes, run after the triggers are rebuilt.
    var backfills: [String] = []
    /// The model the store takes: the new one, with the existing entities, attributes and
    /// relationships in the store's order and new ones after them (order does not matter to
    /// a migration, as in Core Data's lightweight migration, but the store's slots keep theirs).
    var model: ManagedObjectModel
    /// What the migration does, one item a change: `added Post.views`, `added entity Comment`.
    var changes: [String] = []

    /// Plans a migration from `old` to `new`; throws `incompatibleModel` naming
    /// the first change that cannot be applied in place.
    init(from old: ManagedObjectModel, to new: ManagedObjectModel) throws {
        func incompatible(_ what: String) -> TributaryError {
            TributaryError(.incompatibleModel, "the model differs from the store's: \(what)",
                           hint: "only new entities, new optional, defaulted or derived attributes, new relationships and new indexes migrate in place; open the store with its own model (tributary model STORE prints it) or export and replay into a new store")
        }
        let new = try Self.inStoreOrder(new, after: old)
        model = new
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
            // Additive steps for an existing entity.
            for attribute in entity.attributes where oldEntity.attribute(named: attribute.name) == nil {
                guard attribute.isOptional || attribute.defaultValue != nil || attribute.isDerived else {
                    throw incompatible("new attribute \(entity.name).\(attribute.name) is required and has no default")
                }
                changes.append("added \(entity.name).\(attribute.name)")
                steps.append(("ALTER TABLE \(quote(entity.name)) ADD COLUMN \(quote(attribute.name)) \(attribute.type.sqlType)\(DerivedAttributeTriggers.columnDefault(attribute, canBeNonConstant: false))", []))
                if let value = attribute.defaultValue, !value.isNull {
                    steps.append(("UPDATE \(quote(entity.name)) SET \(quote(attribute.name)) = ?", [value.coerced(to: attribute.type) ?? value]))
                }
            }
            let table = schema.tables[entity.name]!
            for relationship in entity.relationships where oldEntity.relationship(named: relationship.name) == nil {
                changes.append("added \(entity.name).\(relationship.name)")
            }
            for relationship in table.foreignKeys where oldEntity.relationship(named: relationship.name) == nil {
                steps.append(("ALTER TABLE \(quote(entity.name)) ADD COLUMN \(quote(relationship.name)) INTEGER", []))
                steps.append((schema.foreignKeyIndex(entity.name, relationship.name), []))
            }
            for index in entity.indexes where !oldEntity.indexes.contains(index) {
                changes.append("added index \(entity.name)(\(index.joined(separator: ", ")))")
                steps.append((schema.plainIndex(entity.name, index), []))
            }
        }
        for entity in new.entities where old.entity(named: entity.name) == nil {
            changes.append("added entity \(entity.name)")
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
                if old.entity(named: entity.name)?.attribute(named: attribute.name) != nil { changes.append("recomputed \(entity.name).\(attribute.name)") }
                backfills.append(triggers.backfillStatement(for: attribute, of: entity))
            }
        }
    }

    /// `new` with what `old` has first, in `old`'s order: entities, and in each entity its
    /// attributes and relationships; what is new follows in `new`'s order.
    static func inStoreOrder(_ new: ManagedObjectModel, after old: ManagedObjectModel) throws -> ManagedObjectModel {
        func ordered<T>(_ items: [T], by oldNames: [String], name: (T) -> String) -> [T] {
            let kept = oldNames.compactMap { oldName in items.first { name($0) == oldName } }
            return kept + items.filter { item in !oldNames.contains(name(item)) }
        }
        let entities = ordered(new.entities, by: old.entities.map(\.name), name: \.name).map { entity in
            guard let oldEntity = old.entity(named: entity.name) else { return entity }
            var entity = entity
            entity.attributes = ordered(entity.attributes, by: oldEntity.attributes.map(\.name), name: \.name)
            entity.relationships = ordered(entity.relationships, by: oldEntity.relationships.map(\.name), name: \.name)
            return entity
        }
        return try ManagedObjectModel(entities: entities)
    }
}
