extension ExplicitMigration {
    /// The column a type conversion fills before it takes the old column's name.
    static let convertingColumn = "_tributary_converting"

    /// The steps and change line of one difference (after the renames).
    mutating func apply(_ difference: ModelMigration.Difference) throws {
        let entity = difference.entity
        let place = "\(entity).\(difference.property ?? "")"
        switch difference.kind {
        case .attributeRemoved:
            before.append(MigrationStep("ALTER TABLE \(quote(entity)) DROP COLUMN \(quote(difference.property!))"))
            changes.append("removed \(place)")
        case .relationshipRemoved:
            guard new.model.entity(named: entity) != nil else { return }
            if case .foreignKeyHere(let column) = renamed.tables[entity]!.storage[difference.property!]! {
                before.append(MigrationStep("ALTER TABLE \(quote(entity)) DROP COLUMN \(quote(column))"))
            }
            changes.append("removed \(place)")
        case .typeChanged(let from, let to):
            convert(entity, difference.property!, TypeConversion(from: from, to: to)!)
        case .optionality(let optional):
            if !optional { requireValues(entity, difference.property!) }
            changes.append("changed \(place) to \(optional ? "optional" : "required")")
        case .defaultChanged:
            changes.append("changed the default of \(place)")
        case .historyExclusion:
            let excluded = new.model.entity(named: entity)!.attribute(named: difference.property!)!.isExcludedFromHistory
            changes.append("\(excluded ? "excluded" : "included") \(place) \(excluded ? "from" : "in") history")
        case .deleteRule(let rule):
            changes.append("changed the delete rule of \(place) to \(rule.rawValue)")
        case .uniqueness:
            let (oldSet, newSet) = (Set(renamed.model.entity(named: entity)!.uniquenessConstraints), Set(new.model.entity(named: entity)!.uniquenessConstraints))
            for constraint in new.model.entity(named: entity)!.uniquenessConstraints where !oldSet.contains(constraint) {
                changes.append("added unique \(entity)(\(constraint.joined(separator: ", ")))")
            }
            for constraint in renamed.model.entity(named: entity)!.uniquenessConstraints where !newSet.contains(constraint) {
                changes.append("removed unique \(entity)(\(constraint.joined(separator: ", ")))")
            }
        case .indexRemoved(let index):
            changes.append("removed index \(entity)(\(index.joined(separator: ", ")))")
        case .entityRemoved:
            return  // with the tables
        case .derivation, .relationshipChanged, .requiredAdded:
            // Refused before planning (``ModelMigration/Difference/impossible``).
            throw TributaryError(.incompatibleModel, "the model differs from the store's: \(difference.what)", hint: difference.impossible)
        }
    }

    /// Checks that every value of the column converts, then converts them: in place when the
    /// column's declared type stays, else into a new column of the new type that takes the
    /// old one's name (the table's indexes are dropped by then).
    private mutating func convert(_ entity: String, _ attribute: String, _ conversion: TypeConversion) {
        let (table, column) = (quote(entity), quote(attribute))
        let oldEntity = renames.oldName(ofEntity: entity)
        let message = "cannot change \(entity).\(attribute) from \(conversion.from.rawValue) to \(conversion.to.rawValue)"
        let hint = "change or clear that value first (tributary update), or keep \(entity).\(attribute) a \(conversion.from.rawValue)"
        before.append(MigrationStep(checking: "SELECT \"_pk\", \(column) FROM \(table) WHERE \(column) IS NOT NULL AND \(conversion.sql(column)) IS NULL ORDER BY \"_pk\" LIMIT 1",
                                    MigrationStep.Check(entity: oldEntity, code: .typeMismatch, message: message, hint: hint)))
        if conversion.changesColumn {
            let temporary = quote(Self.convertingColumn)
            before.append(MigrationStep("ALTER TABLE \(table) ADD COLUMN \(temporary) \(conversion.to.sqlType)"))
            before.append(MigrationStep("UPDATE \(table) SET \(temporary) = \(conversion.sql(column))"))
            before.append(MigrationStep("ALTER TABLE \(table) DROP COLUMN \(column)"))
            before.append(MigrationStep("ALTER TABLE \(table) RENAME COLUMN \(temporary) TO \(column)"))
        } else if conversion.rewritesValues {
            before.append(MigrationStep("UPDATE \(table) SET \(column) = \(conversion.sql(column)) WHERE \(column) IS NOT \(conversion.sql(column))"))
        }
        changes.append("changed \(entity).\(attribute) from \(conversion.from.rawValue) to \(conversion.to.rawValue)")
    }

    /// A newly required attribute: its default fills the rows without a value, or, without
    /// a default, the first such row stops the migration.
    private mutating func requireValues(_ entity: String, _ attribute: String) {
        let (table, column) = (quote(entity), quote(attribute))
        if let value = new.model.entity(named: entity)!.attribute(named: attribute)!.defaultValue, !value.isNull {
            before.append(MigrationStep("UPDATE \(table) SET \(column) = ? WHERE \(column) IS NULL", [value]))
            return
        }
        before.append(MigrationStep(checking: "SELECT \"_pk\", \(column) FROM \(table) WHERE \(column) IS NULL ORDER BY \"_pk\" LIMIT 1",
                                    MigrationStep.Check(entity: renames.oldName(ofEntity: entity), code: .missingValue, message: "cannot make \(entity).\(attribute) required",
                                                        hint: "give it a default, or set a value in every row first (tributary update)")))
    }
}
