/// The steps of an explicit migration (``ModelMigration`` with `explicit`) around the
/// additive ones, after Core Data's lightweight migration: renames (`ALTER TABLE … RENAME`),
/// removals (`DROP TABLE`, `ALTER TABLE … DROP COLUMN`) and type conversions (checked
/// first: the first row whose value does not convert stops the migration, naming it).
///
/// SQLite refuses to drop a column an index uses, and the names of Tributary's indexes
/// carry the names of their tables and columns: every table the migration reshapes has its
/// indexes dropped first (``before``) and made again under the new names last (``after``).
/// The triggers naming tables and columns (derived attributes, capture) are dropped and
/// installed again by ``StoreMetadata``.
struct ExplicitMigration {
    /// Steps before the additive ones.
    var before: [MigrationStep] = []
    /// Steps after them: the reshaped tables' indexes.
    var after: [MigrationStep] = []
    /// What it does, one line a change.
    var changes: [String]
    /// The entities (new names) whose indexes are made again at the end.
    private(set) var reindexed: Set<String> = []

    let old: StoreSchema
    /// The store's model with the new names.
    let renamed: StoreSchema
    let new: StoreSchema
    let renames: ModelRenames

    init(old: ManagedObjectModel, renamed: ManagedObjectModel, new: ManagedObjectModel, renames: ModelRenames, differences: [ModelMigration.Difference]) throws {
        self.old = StoreSchema(model: old)
        self.renamed = StoreSchema(model: renamed)
        self.new = StoreSchema(model: new)
        self.renames = renames
        changes = renames.changes
        reindexed = Self.reshaped(renamed: renamed, new: new, renames: renames, differences: differences)
        for entity in reindexed.sorted() {
            let oldEntity = old.entity(named: renames.oldName(ofEntity: entity))!
            for name in self.old.indexNames(of: oldEntity) { before.append(MigrationStep("DROP INDEX IF EXISTS \(quote(name))")) }
        }
        dropRemovedTables(differences)
        for (oldName, newName) in renames.entities.sorted(by: { $0.key < $1.key }) {
            before.append(MigrationStep("ALTER TABLE \(quote(oldName)) RENAME TO \(quote(newName))"))
        }
        try renameRelationshipStorage()
        renameAttributes()
        for difference in differences { try apply(difference) }
        for entity in new.entities where reindexed.contains(entity.name) {
            for sql in self.new.indexStatements(for: entity) {
                after.append(MigrationStep(sql, refusal: sql.hasPrefix("CREATE UNIQUE") ? uniqueRefusal(entity.name, sql) : nil))
            }
        }
    }

    /// The entities (new names) whose tables are renamed or lose, rename or rewrite a column,
    /// or whose constraints or indexes change.
    private static func reshaped(renamed: ManagedObjectModel, new: ManagedObjectModel, renames: ModelRenames, differences: [ModelMigration.Difference]) -> Set<String> {
        var names = Set(renames.entities.values)
        for entity in new.entities {
            let oldName = renames.oldName(ofEntity: entity.name)
            if !(renames.attributes[oldName] ?? [:]).isEmpty || !(renames.relationships[oldName] ?? [:]).isEmpty { names.insert(entity.name) }
        }
        for difference in differences where new.entity(named: difference.entity) != nil {
            switch difference.kind {
            case .attributeRemoved, .typeChanged, .relationshipRemoved, .uniqueness, .indexRemoved: names.insert(difference.entity)
            default: break
            }
        }
        return names
    }

    private func uniqueRefusal(_ entity: String, _ sql: String) -> TributaryError {
        let columns = sql.split(separator: "(", maxSplits: 1).last.map { $0.dropLast().replacingOccurrences(of: "\"", with: "") } ?? ""
        return TributaryError(.uniqueConstraint, "cannot make \(entity)(\(columns)) unique: after the migration two rows hold the same values",
                              hint: "make the values unique first (tributary query shows them), or leave the constraint out")
    }

    // MARK: Tables and relationships

    /// Drops the tables of removed entities and the join tables of removed relationships.
    private mutating func dropRemovedTables(_ differences: [ModelMigration.Difference]) {
        var tables: [String] = []
        for difference in differences {
            switch difference.kind {
            case .entityRemoved:
                let entity = renamed.model.entity(named: difference.entity)!
                for relationship in entity.relationships { tables += ownedJoinTable(entity.name, relationship.name) }
                tables.append(renames.oldName(ofEntity: difference.entity))
                changes.append("removed entity \(difference.entity)")
            case .relationshipRemoved:
                tables += ownedJoinTable(difference.entity, difference.property!)
            default: break
            }
        }
        for table in tables { before.append(MigrationStep("DROP TABLE \(quote(table))")) }
    }

    /// The join table (old name) the relationship's side owns, if any.
    private func ownedJoinTable(_ entity: String, _ relationship: String) -> [String] {
        let (oldEntity, oldRelationship) = oldNames(entity, relationship)
        guard case .joinTable(let table, "src", _) = old.tables[oldEntity]?.storage[oldRelationship], table == "_\(oldEntity)_\(oldRelationship)" else { return [] }
        return [table]
    }

    private func oldNames(_ entity: String, _ property: String) -> (String, String) {
        (renames.oldName(ofEntity: entity), renames.oldName(ofProperty: property, in: entity))
    }

    /// Renames the foreign-key columns and join tables of kept relationships whose names
    /// changed (their own, or their entities'); a join table whose sides change order has its
    /// columns swapped. A one-to-one relationship whose key would move to the other table is refused.
    private mutating func renameRelationshipStorage() throws {
        for entity in renamed.model.entities {
            guard let newEntity = new.model.entity(named: entity.name) else { continue }
            for relationship in entity.relationships where newEntity.relationship(named: relationship.name) != nil {
                let (oldEntity, oldRelationship) = oldNames(entity.name, relationship.name)
                let now = renamed.tables[entity.name]!.storage[relationship.name]!
                switch old.tables[oldEntity]!.storage[oldRelationship]! {
                case .foreignKeyHere(let column):
                    guard case .foreignKeyHere(let newColumn) = now else {
                        throw TributaryError(.incompatibleModel, "the model differs from the store's: the new names would move the key of the one-to-one relationship \(entity.name).\(relationship.name) to \(relationship.destinationEntity)'s table",
                                             location: "\(entity.name).\(relationship.name)", hint: "keep the old names of \(entity.name).\(relationship.name) and its inverse, or export the store and replay it into a new one")
                    }
                    if newColumn != column {
                        before.append(MigrationStep("ALTER TABLE \(quote(entity.name)) RENAME COLUMN \(quote(column)) TO \(quote(newColumn))"))
                    }
                case .joinTable(let table, "src", _) where table == "_\(oldEntity)_\(oldRelationship)":
                    guard case .joinTable(let newTable, let source, _) = now, newTable != table || source != "src" else { continue }
                    before.append(MigrationStep("DROP INDEX IF EXISTS \(quote(table + "_dst"))"))
                    if newTable != table { before.append(MigrationStep("ALTER TABLE \(quote(table)) RENAME TO \(quote(newTable))")) }
                    if source != "src" {
                        for (from, to) in [("src", "_tributary_swap"), ("dst", "src"), ("_tributary_swap", "dst")] {
                            before.append(MigrationStep("ALTER TABLE \(quote(newTable)) RENAME COLUMN \(quote(from)) TO \(quote(to))"))
                        }
                    }
                    after.append(MigrationStep(renamed.joinTableIndex(newTable)))
                default:
                    continue
                }
            }
        }
    }

    /// Renames the columns of renamed attributes.
    private mutating func renameAttributes() {
        for entity in new.model.entities {
            let renamedAttributes = renames.attributes[renames.oldName(ofEntity: entity.name)] ?? [:]
            for (oldName, newName) in renamedAttributes.sorted(by: { $0.key < $1.key }) {
                before.append(MigrationStep("ALTER TABLE \(quote(entity.name)) RENAME COLUMN \(quote(oldName)) TO \(quote(newName))"))
            }
        }
    }
}
