/// The triggers that log other programs' writes to one table into ``CaptureLog``.
///
/// They use plain SQL only (no application-defined function, no pragma function), so
/// they run in any client (the `sqlite3` shell, Python) and under `trusted_schema=OFF`.
/// Tributary's own connections do not run them (``Connection/disableMainTriggers()``):
/// its pre-update hook records its writes already.
///
/// Per entity table: an insert logs the key only; each column has its own `AFTER
/// UPDATE OF` trigger, guarded by `IS NOT` as stored and by storage class (so NULL
/// transitions and 1 replaced by 1.0 count, and an update costs what its changed columns
/// cost, whatever the table's width), logging the old value; a delete logs every column; a
/// `BEFORE INSERT` trigger logs the rows an `INSERT OR REPLACE` would remove (same key, or
/// the same values of a unique index, by its collation, expression or condition:
/// ``UniqueIndexes``), since SQLite runs no delete trigger for them (its `WHEN` looks the
/// key and unique values up first, so an insert that meets no row pays index seeks, not
/// logging statements); likewise `BEFORE UPDATE OF` the key and
/// of the unique indexes' columns log the rows an `UPDATE OR REPLACE` would remove.
/// Join tables log inserts and deletes of their pairs.
///
/// A `WITHOUT ROWID` table's rows are logged by their numbers in its ``KeyMap``: its insert
/// trigger numbers a new key first, a key change moves the number instead of logging a new
/// object, and its probes match rows by the declared key.
struct CaptureTriggers {
    let table: CapturedTable

    /// Every trigger, as `CREATE TRIGGER` statements.
    var statements: [String] { statements(.asStoredAndTyped) }

    private func statements(_ comparison: Comparison) -> [String] {
        switch table.kind {
        case .entity: entityTriggers(guardedProbe: true, comparison) + [keyReplaceTrigger] + (uniqueReplaceTrigger(readingKey: comparison == .asStoredAndTyped).map { [$0] } ?? [])
        case .join: joinTriggers
        }
    }

    /// The trigger sets earlier versions of Tributary installed: finding one is an upgrade,
    /// not triggers another program altered. Until format 8 a column's trigger compared old
    /// and new by the column's collation (a case-only change of a `NOCASE` column, a
    /// trailing space of an `RTRIM` one, went unlogged); until format 9 it did not compare
    /// storage classes (1 replaced by 1.0 in an untyped column went unlogged). History
    /// format 5 had no key-replace trigger (one that dropped only that trigger is taken for
    /// the same; it missed at most rows an `UPDATE OR REPLACE` of a key removed); formats 5
    /// and 6 ran the insert's replace probe unguarded and had no probe for an `UPDATE OR
    /// REPLACE` of a unique column.
    var previousVersions: [Set<String>] {
        guard table.kind == .entity else { return [Set(joinInsertAndDelete), Set(joinInsertAndDelete + joinUpdateAndInsertProbe)] }
        let older = [Comparison.byCollation, .asStored].map { Set(statements($0)) }
        guard table.keyMap == nil else { return older }
        let unguarded = entityTriggers(guardedProbe: false, .byCollation)
        return older + [Set(unguarded + [keyReplaceTrigger]), Set(unguarded)]
    }

    /// The row a key change would replace (`UPDATE OR REPLACE … SET key = …` onto a key in
    /// use): SQLite runs no delete trigger for it. Kept as a delete only if it really went.
    private var keyReplaceTrigger: String {
        let values = table.columns.indices.map { "c\($0)" }
        return "CREATE TRIGGER \(trigger("kr")) BEFORE UPDATE OF \(keyUpdateColumns.map(quote).joined(separator: ", ")) ON \(name) WHEN \(keyChanged) BEGIN "
            + "INSERT INTO \(log) (t, k0\(list(values))) SELECT \(code(.replaced)), \(selectedKey)\(list(table.columns.map(quote))) FROM \(name) WHERE \(sameKey("NEW")); END"
    }

    private var name: String { quote(table.name) }
    private func trigger(_ suffix: String) -> String { quote("\(CaptureLog.triggerPrefix)\(table.id)_\(suffix)") }

    /// The columns whose update changes the logged key: the rowid's alias, or a `WITHOUT ROWID` table's key.
    private var keyUpdateColumns: [String] { table.keyMap?.keyColumns ?? [table.keyColumns[0]] }
    /// The condition that an update changed the row's key.
    private var keyChanged: String { keyUpdateColumns.map { "OLD.\(quote($0)) IS NOT NEW.\(quote($0))" }.joined(separator: " OR ") }
    /// The logged key of `row` (`NEW`, `OLD`): its rowid, or its key's number.
    private func loggedKey(_ row: String) -> String { table.keyMap?.id(of: row) ?? "\(row).\(quote(table.keyColumns[0]))" }
    /// The logged key of the table's row in a query of it.
    private var selectedKey: String { table.keyMap?.id(of: name) ?? quote(table.keyColumns[0]) }
    /// The condition that the table's row (in a query of it) has the key of `row`.
    private func sameKey(_ row: String) -> String { table.keyMap?.match(row) ?? "\(quote(table.keyColumns[0])) = \(row).\(quote(table.keyColumns[0]))" }
    /// The condition that the table's row is not `row`.
    private func otherRow(_ row: String) -> String {
        table.keyMap == nil ? "\(quote(table.keyColumns[0])) IS NOT \(row).\(quote(table.keyColumns[0]))" : "NOT (\(sameKey(row)))"
    }
    private func code(_ op: CaptureLog.Op, column: Int = 0) -> Int64 { CaptureLog.code(table: table.id, column: column, op: op) }
    private var log: String { CaptureLog.table }

    /// How a column's trigger tells that an update changed the column, from the oldest
    /// trigger set to today's.
    enum Comparison {
        /// `IS NOT`, by the column's collation (until format 8).
        case byCollation
        /// `IS NOT … COLLATE BINARY`: a case-only change of a `NOCASE` column counts (format 8).
        case asStored
        /// As stored, and by storage class: SQLite calls 1 and 1.0 equal, but an untyped,
        /// `BLOB` or `STRICT` `ANY` column keeps each as given, and readers show them apart
        /// (format 9).
        case asStoredAndTyped
    }

    /// The condition that an update changed `column` (quoted), by `comparison`.
    private func changed(_ column: String, _ comparison: Comparison) -> String {
        switch comparison {
        case .byCollation: "OLD.\(column) IS NOT NEW.\(column)"
        case .asStored: "OLD.\(column) IS NOT NEW.\(column) COLLATE BINARY"
        case .asStoredAndTyped: "OLD.\(column) IS NOT NEW.\(column) COLLATE BINARY OR typeof(OLD.\(column)) <> typeof(NEW.\(column))"
        }
    }

    private func entityTriggers(guardedProbe: Bool, _ comparison: Comparison) -> [String] {
        let key = quote(table.keyColumns[0])
        let values = table.columns.indices.map { "c\($0)" }
        let columns = table.columns.map(quote)
        // A key change may move the number before or after a column's trigger runs: the old key's, else the new one's.
        let updatedKey = table.keyMap.map { "COALESCE(\($0.id(of: "OLD")), \($0.id(of: "NEW")))" } ?? "NEW.\(key)"
        let keyChange = table.keyMap?.moveNumber ?? "INSERT INTO \(log) (t, k0, c0) VALUES (\(code(.keyChange)), NEW.\(key), OLD.\(key));"
        var sql = [
            "CREATE TRIGGER \(trigger("i")) AFTER INSERT ON \(name) BEGIN \(table.keyMap.map { $0.numberNew + " " } ?? "")"
                + "INSERT INTO \(log) (t, k0) VALUES (\(code(.insert)), \(loggedKey("NEW"))); END",
            "CREATE TRIGGER \(trigger("k")) AFTER UPDATE OF \(keyUpdateColumns.map(quote).joined(separator: ", ")) ON \(name) WHEN \(keyChanged) BEGIN \(keyChange) END",
            "CREATE TRIGGER \(trigger("d")) AFTER DELETE ON \(name) BEGIN INSERT INTO \(log) (t, k0\(list(values))) "
                + "VALUES (\(code(.delete)), \(loggedKey("OLD"))\(list(columns.map { "OLD.\($0)" }))); END",
        ]
        for (j, column) in columns.enumerated() {
            sql.append("CREATE TRIGGER \(trigger("u\(j)")) AFTER UPDATE OF \(column) ON \(name) WHEN \(changed(column, comparison)) BEGIN "
                       + "INSERT INTO \(log) (t, k0, c0) VALUES (\(code(.update, column: j)), \(updatedKey), OLD.\(column)); END")
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
    /// values. An index on an expression or with a condition may read any column, so any
    /// column's update runs it, and from format 9 (`readingKey`) the rowid's alias's too.
    private func uniqueReplaceTrigger(readingKey: Bool) -> String? {
        guard !table.uniqueConstraints.isEmpty else { return nil }
        let terms = Set(table.uniqueConstraints.joined())
        let alias = readingKey && table.keyMap == nil && !RowidName.contains(table.keyColumns[0]) ? [table.keyColumns[0]] : []
        let updated = terms.isSubset(of: table.columns) ? table.columns.filter(terms.contains) : table.columns + alias
        guard !updated.isEmpty else { return nil }
        let probe = replaceProbe(keyProbe: false, rowItself: "OLD")
        return "CREATE TRIGGER \(trigger("ur")) BEFORE UPDATE OF \(updated.map(quote).joined(separator: ", ")) ON \(name) WHEN \(probe.when) BEGIN \(probe.body) END"
    }

    /// Logs, as replaced, the rows in the new row's way: the one with its key (when
    /// `keyProbe`) and those with its values of a unique index, other than `rowItself`
    /// (`NEW` for an insert, `OLD` for an update); `when` finds whether there is any.
    private func replaceProbe(keyProbe: Bool, rowItself: String) -> (when: String, body: String) {
        let insert = "INSERT INTO \(log) (t, k0\(list(table.columns.indices.map { "c\($0)" }))) SELECT \(code(.replaced)), \(selectedKey)\(list(table.columns.map(quote))) FROM \(name) WHERE "
        var probes = keyProbe ? ["\(insert)\(sameKey("NEW"));"] : []
        var conflicts = keyProbe ? ["EXISTS (SELECT 1 FROM \(name) WHERE \(sameKey("NEW")))"] : []
        for constraint in table.uniqueConstraints {
            let match = constraint.map(conflict).joined(separator: " AND ")
            probes.append("\(insert)\(match) AND \(otherRow(rowItself));")
            conflicts.append(keyProbe ? "EXISTS (SELECT 1 FROM \(name) WHERE \(match))" : "EXISTS (SELECT 1 FROM \(name) WHERE \(match) AND \(otherRow("OLD")))")
        }
        return (conflicts.joined(separator: " OR "), probes.joined(separator: " "))
    }

    /// The condition that the row at hand and the new row meet on one term of a unique index
    /// (``UniqueIndexes``): a column compared as stored, or SQL evaluated for the new row over
    /// its values.
    private func conflict(_ term: String) -> String {
        if table.columns.contains(term) || table.keyColumns.contains(term) { return "\(quote(term)) = NEW.\(quote(term))" }
        let row = ((table.keyMap == nil ? table.keyColumns : []) + table.columns).map { "NEW.\(quote($0)) AS \(quote($0))" }.joined(separator: ", ")
        return "(\(term)) = (SELECT \(term) FROM (SELECT \(row)))"
    }

    /// A pair's insert and delete; an update of a pair as the delete of the old pair and the
    /// insert of the new one; and an `INSERT OR REPLACE`, or an `UPDATE OR REPLACE`, onto a pair
    /// already there as replacing it (so that it nets out: SQLite runs no delete trigger for the
    /// row it removes). Earlier versions installed the first two only, then all but the update's
    /// probe (taken for an upgrade, ``previousVersions``): another program moving a link with
    /// `UPDATE` went unrecorded, then moving it onto a link already there recorded that link as added.
    private var joinTriggers: [String] {
        joinInsertAndDelete + joinUpdateAndInsertProbe + [
            "CREATE TRIGGER \(trigger("ur")) BEFORE UPDATE ON \(name) WHEN (\(pairMoved)) AND EXISTS (SELECT 1 FROM \(name) WHERE \(samePair)) "
                + "BEGIN \(pair("NEW", .replaced)) END",
        ]
    }

    private var joinUpdateAndInsertProbe: [String] {
        [
            "CREATE TRIGGER \(trigger("u")) AFTER UPDATE ON \(name) WHEN \(pairMoved) BEGIN \(pair("OLD", .delete)) \(pair("NEW", .insert)) END",
            "CREATE TRIGGER \(trigger("r")) BEFORE INSERT ON \(name) WHEN EXISTS (SELECT 1 FROM \(name) WHERE \(samePair)) BEGIN \(pair("NEW", .replaced)) END",
        ]
    }

    private var joinSource: String { quote(table.keyColumns[0]) }
    private var joinDestination: String { quote(table.keyColumns[1]) }
    /// The condition that an update changed the pair.
    private var pairMoved: String { "OLD.\(joinSource) IS NOT NEW.\(joinSource) OR OLD.\(joinDestination) IS NOT NEW.\(joinDestination)" }
    /// The condition that the join table's row (in a query of it) is the new pair.
    private var samePair: String { "\(joinSource) = NEW.\(joinSource) AND \(joinDestination) = NEW.\(joinDestination)" }
    /// Logs `row`'s pair (`OLD`, `NEW`) as `op`.
    private func pair(_ row: String, _ op: CaptureLog.Op) -> String {
        "INSERT INTO \(log) (t, k0, k1) VALUES (\(code(op)), \(row).\(joinSource), \(row).\(joinDestination));"
    }

    private var joinInsertAndDelete: [String] {
        [
            "CREATE TRIGGER \(trigger("i")) AFTER INSERT ON \(name) BEGIN \(pair("NEW", .insert)) END",
            "CREATE TRIGGER \(trigger("d")) AFTER DELETE ON \(name) BEGIN \(pair("OLD", .delete)) END",
        ]
    }

    private func list(_ items: [String]) -> String { items.map { ", \($0)" }.joined() }
}
