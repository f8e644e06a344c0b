import Foundation
import Tributary

extension PostgresMirrorSchema {
    /// The statements that bring a mirror of this schema to `next`, the mirror of the model
    /// after `change`: new tables, join tables and indexes (`IF NOT EXISTS`), new columns;
    /// and, when the change is not additive, renamed tables and columns (from the change's
    /// `renamed E.a to E.b` and `renamed entity A to B`), dropped columns and tables, and
    /// changed column types (`USING column::type`). A table named in the pipeline's
    /// `tables:` is renamed only by hand: a rename of its entity throws, naming it.
    ///
    /// ```swift
    /// let statements = try old.migrationStatements(to: new, change: record.change)
    /// ```
    public func migrationStatements(to next: PostgresMirrorSchema, change: SchemaChange) throws -> [String] {
        let (renamedEntities, renamedProperties) = (change.renamedEntities, change.renamedProperties)
        var statements: [String] = []
        for (from, to) in renamedEntities.sorted(by: { $0.key < $1.key }) {
            guard let old = tables[from], let new = next.tables[to] else { continue }
            if old.name != new.name { statements.append("ALTER TABLE IF EXISTS \(qualified(old.name)) RENAME TO \(Self.quote(new.name))") }
        }
        for entity in tables.keys.sorted() where next.tables[entity] == nil && renamedEntities[entity] == nil {
            statements += tables[entity]!.joinTables.values.sorted().map { "DROP TABLE IF EXISTS \(qualified($0))" }
            statements.append("DROP TABLE IF EXISTS \(qualified(tables[entity]!.name))")
        }
        for entity in next.tables.keys.sorted() {
            let new = next.tables[entity]!
            let oldEntity = renamedEntities.first { $0.value == entity }?.key ?? entity
            guard let old = tables[oldEntity] else { continue }
            statements += columnStatements(from: old, to: new, renames: renamedProperties[entity] ?? renamedProperties[oldEntity] ?? [:], in: next)
        }
        return statements + next.createStatements().filter { !$0.hasPrefix("CREATE SCHEMA") && !$0.contains(Self.checkpointTable) }
    }

    private func columnStatements(from old: Table, to new: Table, renames: [String: String], in next: PostgresMirrorSchema) -> [String] {
        let table = next.qualified(new.name)
        var statements: [String] = []
        var oldColumns = Dictionary(old.columns.map { ($0.name, $0.type) }, uniquingKeysWith: { first, _ in first })
        for (from, to) in renames.sorted(by: { $0.key < $1.key }) where oldColumns[from] != nil {
            statements.append("ALTER TABLE \(table) RENAME COLUMN \(Self.quote(from)) TO \(Self.quote(to))")
            oldColumns[to] = oldColumns.removeValue(forKey: from)
        }
        for (name, type) in new.columns {
            guard let oldType = oldColumns[name] else {
                // Rows already there take the attribute's default, as the store's migration gave them.
                let value = new.entity.attribute(named: name)?.defaultValue.flatMap(Self.literal)
                statements.append("ALTER TABLE \(table) ADD COLUMN IF NOT EXISTS \(Self.quote(name)) \(type)" + (value.map { " DEFAULT \($0)" } ?? ""))
                if value != nil { statements.append("ALTER TABLE \(table) ALTER COLUMN \(Self.quote(name)) DROP DEFAULT") }
                continue
            }
            if oldType != type { statements.append("ALTER TABLE \(table) ALTER COLUMN \(Self.quote(name)) TYPE \(type) USING \(Self.quote(name))::\(type)") }
        }
        for name in oldColumns.keys.sorted() where !new.columns.contains(where: { $0.name == name }) {
            statements.append("ALTER TABLE \(table) DROP COLUMN IF EXISTS \(Self.quote(name))")
        }
        return statements
    }

    /// A default value as a PostgreSQL literal (numbers, booleans, text), nil for others.
    static func literal(_ value: AttributeValue) -> String? {
        switch value {
        case .integer(let number): return String(number)
        case .double(let number) where number.isFinite: return String(number)
        case .bool(let flag): return flag ? "true" : "false"
        case .string(let text): return "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
        default: return nil
        }
    }
}
