/// The triggers that log other programs' writes to one table into ``CaptureLog``.
///
/// They use plain SQL only (no application-defined function, no pragma function), so
/// they run in any client (the `sqlite3` shell, Python) and under `trusted_schema=OFF`.
/// Tributary's own connections do not run them (``Connection/disableMainTriggers()``):
/// its pre-update hook records its writes already.
///
/// Per entity table: an insert logs the key only; each column has its own `AFTER
/// UPDATE OF` trigger, guarded by `IS NOT` (so NULL transitions count and an update
/// costs what its changed columns cost, whatever the table's width), logging the old
/// value; a delete logs every column; a `BEFORE INSERT` trigger logs the rows an
/// `INSERT OR REPLACE` would remove (same key, or the same values of a unique index, by
/// its collation or expression: ``UniqueIndexes``), since SQLite runs no delete trigger for
/// them (its `WHEN` looks the key and unique values up first, so an insert that meets no
/// row pays index seeks, not logging statements); likewise `BEFORE UPDATE OF` the key and
/// of the unique indexes' columns log the rows an `UPDATE OR REPLACE` would remove.
/// Join tables log inserts and deletes of their pairs.
struct CaptureTriggers {
    let table: CapturedTable

    /// Every trigger, as `CREATE TRIGGER` statements.
    var statements: [String] {
        switch table.kind {
        case .entity: entityTriggers(guardedProbe: true) + [keyReplaceTrigger] + (uniqueReplaceTrigger.map { [$0] } ?? [])
        case .join: joinTriggers
        }
    }

    /// The trigger sets earlier versions of Tributary installed: finding one is an upgrade,
    /// not triggers another program altered. History format 5 had no key-replace trigger (one
    /// that dropped only that trigger is taken for the same; it missed at most rows an
    /// `UPDATE OR REPLACE` of a key removed); formats 5 and 6 ran the insert's replace probe
    /// unguarded and had no probe for an `UPDATE OR REPLACE` of a unique column.
    var previousVersions: [Set<String>] {
        guard table.kind == .entity else { return [] }
        let unguarded = entityTriggers(guardedProbe: false)
        return [Set(unguarded + [keyReplaceTrigger]), Set(unguarded)]
    }

    /// The row a key change would replace (`UPDATE OR REPLACE … SET key = …` onto a key in
    /// use): SQLite runs no delete trigger for it. Kept as a delete only if it really went.
    private var keyReplaceTrigger: String {
        let key = quote(table.keyColumns[0])
        let values = table.columns.indices.map { "c\($0)" }
        return "CREATE TRIGGER \(trigger("kr")) BEFORE UPDATE OF \(key) ON \(name) WHEN OLD.\(key) IS NOT NEW.\(key) BEGIN "
            + "INSERT INTO \(log) (t, k0\(list(values))) SELECT \(code(.replaced)), \(key)\(list(table.columns.map(quote))) FROM \(name) WHERE \(key) = NEW.\(key); END"
    }

    private var name: String { quote(table.name) }
    private func trigger(_ suffix: String) -> String { quote("\(CaptureLog.triggerPrefix)\(table.id)_\(suffix)") }
    private func code(_ op: CaptureLog.Op, column: Int = 0) -> Int64 { CaptureLog.code(table: table.id, column: column, op: op) }
    private var log: String { CaptureLog.table }

    private func entityTriggers(guardedProbe: Bool) -> [String] {
        let key = quote(table.keyColumns[0])
        let values = table.columns.indices.map { "c\($0)" }
        let columns = table.columns.map(quote)
        var sql = [
            "CREATE TRIGGER \(trigger("i")) AFTER INSERT ON \(name) BEGIN INSERT INTO \(log) (t, k0) VALUES (\(code(.insert)), NEW.\(key)); END",
            "CREATE TRIGGER \(trigger("k")) AFTER UPDATE OF \(key) ON \(name) WHEN OLD.\(key) IS NOT NEW.\(key) BEGIN "
                + "INSERT INTO \(log) (t, k0, c0) VALUES (\(code(.keyChange)), NEW.\(key), OLD.\(key)); END",
            "CREATE TRIGGER \(trigger("d")) AFTER DELETE ON \(name) BEGIN INSERT INTO \(log) (t, k0\(list(values))) "
                + "VALUES (\(code(.delete)), OLD.\(key)\(list(columns.map { "OLD.\($0)" }))); END",
        ]
        for (j, column) in columns.enumerated() {
            sql.append("CREATE TRIGGER \(trigger("u\(j)")) AFTER UPDATE OF \(column) ON \(name) WHEN OLD.\(column) IS NOT NEW.\(column) BEGIN "
                       + "INSERT INTO \(log) (t, k0, c0) VALUES (\(code(.update, column: j)), NEW.\(key), OLD.\(column)); END")
        }
        // The rows an INSERT OR REPLACE would delete: the one with the new key, and those
        // with the new values of a unique index (NULLs never conflict).
        let probe = replaceProbe(keyProbe: true, rowItself: "NEW")
        let when = guardedProbe ? " WHEN \(probe.when)" : ""
        sql.append("CREATE TRIGGER \(trigger("r")) BEFORE INSERT ON \(name)\(when) BEGIN \(probe.body) END")
        return sql
    }

    /// The rows an `UPDATE OR REPLACE` of a unique index's columns would remove (no delete
    /// trigger runs for them either): those, other than the row updated, that have the new
    /// values. An index on an expression may read any column, so any column's update runs it.
    private var uniqueReplaceTrigger: String? {
        guard !table.uniqueConstraints.isEmpty else { return nil }
        let terms = Set(table.uniqueConstraints.joined())
        let updated = terms.isSubset(of: table.columns) ? table.columns.filter(terms.contains) : table.columns
        guard !updated.isEmpty else { return nil }
        let probe = replaceProbe(keyProbe: false, rowItself: "OLD")
        return "CREATE TRIGGER \(trigger("ur")) BEFORE UPDATE OF \(updated.map(quote).joined(separator: ", ")) ON \(name) WHEN \(probe.when) BEGIN \(probe.body) END"
    }

    /// Logs, as replaced, the rows in the new row's way: the one with its key (when
    /// `keyProbe`) and those with its values of a unique index, other than `rowItself`
    /// (`NEW` for an insert, `OLD` for an update); `when` finds whether there is any.
    private func replaceProbe(keyProbe: Bool, rowItself: String) -> (when: String, body: String) {
        let key = quote(table.keyColumns[0])
        let insert = "INSERT INTO \(log) (t, k0\(list(table.columns.indices.map { "c\($0)" }))) SELECT \(code(.replaced)), \(key)\(list(table.columns.map(quote))) FROM \(name) WHERE "
        var probes = keyProbe ? ["\(insert)\(key) = NEW.\(key);"] : []
        var conflicts = keyProbe ? ["EXISTS (SELECT 1 FROM \(name) WHERE \(key) = NEW.\(key))"] : []
        for constraint in table.uniqueConstraints {
            let match = constraint.map(conflict).joined(separator: " AND ")
            probes.append("\(insert)\(match) AND \(key) IS NOT \(rowItself).\(key);")
            conflicts.append(keyProbe ? "EXISTS (SELECT 1 FROM \(name) WHERE \(match))" : "EXISTS (SELECT 1 FROM \(name) WHERE \(match) AND \(key) IS NOT OLD.\(key))")
        }
        return (conflicts.joined(separator: " OR "), probes.joined(separator: " "))
    }

    /// The condition that the row at hand and the new row meet on one term of a unique index
    /// (``UniqueIndexes``): a column compared as stored, or SQL evaluated for the new row over
    /// its values.
    private func conflict(_ term: String) -> String {
        if table.columns.contains(term) || table.keyColumns.contains(term) { return "\(quote(term)) = NEW.\(quote(term))" }
        let row = (table.keyColumns + table.columns).map { "NEW.\(quote($0)) AS \(quote($0))" }.joined(separator: ", ")
        return "(\(term)) = (SELECT \(term) FROM (SELECT \(row)))"
    }

    private var joinTriggers: [String] {
        let (source, destination) = (quote(table.keyColumns[0]), quote(table.keyColumns[1]))
        return [
            "CREATE TRIGGER \(trigger("i")) AFTER INSERT ON \(name) BEGIN INSERT INTO \(log) (t, k0, k1) VALUES (\(code(.insert)), NEW.\(source), NEW.\(destination)); END",
            "CREATE TRIGGER \(trigger("d")) AFTER DELETE ON \(name) BEGIN INSERT INTO \(log) (t, k0, k1) VALUES (\(code(.delete)), OLD.\(source), OLD.\(destination)); END",
        ]
    }

    private func list(_ items: [String]) -> String { items.map { ", \($0)" }.joined() }
}
