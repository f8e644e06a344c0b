/// The difference between the model cached in a store and the model it is opened
/// with: either steps to apply in place, or the first change that cannot be applied.
///
/// Opening a store applies additive changes only (new entities, new optional, defaulted or
/// derived attributes, new relationships, new indexes). With `explicit` (``PersistentStoreDescription/allowsExplicitMigration``,
/// `tributary migrate`), renames, removals, type conversions and constraint changes migrate
/// too (``ExplicitMigration``).
struct ModelMigration {
    /// Statements and checks to run, in order.
    var steps: [MigrationStep] = []
    /// `UPDATE`s computing new or changed derived attributes, run after the triggers are rebuilt.
    var backfills: [String] = []
    /// The model the store takes: the new one, with the existing entities, attributes and
    /// relationships in the store's order and new ones after them (order does not matter to
    /// a migration, as in Core Data's lightweight migration, but the store's slots keep theirs).
    var model: ManagedObjectModel
    /// What the migration does, one item a change: `added Post.views`, `added entity Comment`,
    /// `renamed Post.body to Post.content`, `removed Post.legacy`, `changed Post.views from integer to double`.
    var changes: [String] = []
    /// Whether the steps rename, drop or rewrite tables or columns: the triggers that name them
    /// (derived attributes, capture) are dropped before the steps and installed again after.
    var reshapesTables = false

    /// What a refusal of a change only an explicit migration makes says to do.
    static let explicitHint = "only new entities, new optional, defaulted or derived attributes, new relationships and new indexes migrate on open; "
        + "to rename, remove or convert, run tributary migrate STORE --model NEW.yml (--dry-run shows the plan)"

    /// Plans a migration from `old` to `new`; throws `incompatibleModel` naming the first
    /// change that cannot be applied (without `explicit`: the first that is not additive).
    init(from old: ManagedObjectModel, to new: ManagedObjectModel, explicit: Bool = false) throws {
        let renames = try ModelRenames(from: old, to: new)
        let renamed = try renames.isEmpty ? old : renames.applied(to: old)
        let differences = Difference.all(from: renamed, to: new)
        try Self.refuse(renames, differences, explicit: explicit)
        let new = try Self.inStoreOrder(new, after: renamed)
        model = new
        var reindexed = Set<String>()
        if explicit && (!renames.isEmpty || !differences.isEmpty) {
            let plan = try ExplicitMigration(old: old, renamed: renamed, new: new, renames: renames, differences: differences)
            steps = plan.before
            changes = plan.changes
            reindexed = plan.reindexed
            reshapesTables = !plan.before.isEmpty
            planAdditions(from: renamed, to: new, reindexed: reindexed)
            steps += plan.after
        } else {
            planAdditions(from: renamed, to: new, reindexed: reindexed)
        }
        planBackfills(from: renamed, to: new)
    }

    /// Throws for the first change the migration cannot make.
    private static func refuse(_ renames: ModelRenames, _ differences: [ModelMigration.Difference], explicit: Bool) throws {
        func refusal(_ what: String, _ hint: String) -> TributaryError {
            TributaryError(.incompatibleModel, "the model differs from the store's: \(what)", hint: hint)
        }
        if explicit {
            if let impossible = differences.first(where: { $0.impossible != nil }) { throw refusal(impossible.what, impossible.impossible!) }
            return
        }
        if let rename = renames.changes.first { throw refusal("it renames" + rename.dropFirst("renamed".count), explicitHint) }
        if let difference = differences.first { throw refusal(difference.what, difference.impossible ?? explicitHint) }
    }

    /// The additive steps: new columns, tables, join tables and indexes (those of `reindexed`
    /// tables are all made again by the explicit steps after).
    private mutating func planAdditions(from old: ManagedObjectModel, to new: ManagedObjectModel, reindexed: Set<String>) {
        let schema = StoreSchema(model: new)
        for oldEntity in old.entities {
            guard let entity = new.entity(named: oldEntity.name) else { continue }
            for attribute in entity.attributes where oldEntity.attribute(named: attribute.name) == nil {
                changes.append("added \(entity.name).\(attribute.name)")
                steps.append(MigrationStep("ALTER TABLE \(quote(entity.name)) ADD COLUMN \(quote(attribute.name)) \(attribute.type.sqlType)\(DerivedAttributeTriggers.columnDefault(attribute, canBeNonConstant: false))"))
                if let value = attribute.defaultValue, !value.isNull {
                    steps.append(MigrationStep("UPDATE \(quote(entity.name)) SET \(quote(attribute.name)) = ?", [value.coerced(to: attribute.type) ?? value]))
                }
            }
            let table = schema.tables[entity.name]!
            for relationship in entity.relationships where oldEntity.relationship(named: relationship.name) == nil {
                changes.append("added \(entity.name).\(relationship.name)")
            }
            let indexed = !reindexed.contains(entity.name)
            for relationship in table.foreignKeys where oldEntity.relationship(named: relationship.name) == nil {
                steps.append(MigrationStep("ALTER TABLE \(quote(entity.name)) ADD COLUMN \(quote(relationship.name)) INTEGER"))
                if indexed { steps.append(MigrationStep(schema.foreignKeyIndex(entity.name, relationship.name))) }
            }
            for index in entity.indexes where !oldEntity.indexes.contains(index) {
                changes.append("added index \(entity.name)(\(index.joined(separator: ", ")))")
                if indexed { steps.append(MigrationStep(schema.plainIndex(entity.name, index))) }
            }
        }
        for entity in new.entities where old.entity(named: entity.name) == nil {
            changes.append("added entity \(entity.name)")
            for sql in schema.createStatements(for: entity) { steps.append(MigrationStep(sql)) }
        }
        // Join tables of relationships that did not exist before.
        for entity in new.entities {
            let oldEntity = old.entity(named: entity.name)
            for sql in schema.joinTableStatements(for: entity) {
                let isNew = entity.relationships.contains { relationship in
                    sql.contains(quote("_\(entity.name)_\(relationship.name)")) && oldEntity?.relationship(named: relationship.name) == nil
                }
                if isNew { steps.append(MigrationStep(sql)) }
            }
        }
    }

    /// New or changed derived attributes, computed for the rows already there once the
    /// triggers are rebuilt (StoreMetadata does, between steps and backfills). After an
    /// explicit migration that reshaped tables, every derived attribute but `now()` is
    /// computed again (a conversion may change what it reads; the update writes only the
    /// rows whose value changes).
    private mutating func planBackfills(from old: ManagedObjectModel, to new: ManagedObjectModel) {
        let triggers = DerivedAttributeTriggers(schema: StoreSchema(model: new))
        for entity in new.entities {
            for attribute in entity.attributes where attribute.isDerived {
                let previous = old.entity(named: entity.name)?.attribute(named: attribute.name)
                let changed = previous?.derivation != attribute.derivation
                guard changed || (reshapesTables && attribute.derivation != .now) else { continue }
                if changed && previous != nil { changes.append("recomputed \(entity.name).\(attribute.name)") }
                backfills.append(triggers.backfillStatement(for: attribute, of: entity))
            }
        }
    }

    /// The SQL the migration runs, in order, with comments for the triggers dropped and
    /// installed again and for the checks (for `tributary migrate --dry-run --verbose`).
    var statements: [String] {
        var lines = reshapesTables ? ["-- drop the triggers of derived attributes and capture"] : []
        lines += steps.map { $0.check == nil ? $0.sql + ";" : "-- stop at the first row of: \($0.sql)" }
        lines.append("-- install the triggers of derived attributes\(reshapesTables ? " and capture" : "") for the new model")
        lines += backfills.map { $0 + ";" }
        lines.append("-- cache the new model in \(StoreMetadata.table)")
        return lines
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
