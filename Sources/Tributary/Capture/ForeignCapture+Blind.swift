extension ForeignCapture {
    /// Cuts `(after, through]`, whose transaction boundaries are unknown, into transactions of
    /// at most ``unknownGroupSize`` log rows, each ending before a log row touches a row it
    /// touched already, but for the row a replace probe logged before the statement's insert
    /// and an update of another column (one statement's columns, each logged by its trigger,
    /// or updates whose values a net change keeps all the same): a transaction folds to each
    /// row's net change, so where the boundaries are unknown nothing nets out, and an object
    /// that two transactions inserted and deleted, or updated twice, keeps each change.
    static func blind(after: Int64, through: Int64, on db: Connection) throws -> [ForeignFold.Group] {
        guard after < through else { return [] }
        let statement = try db.makeStatement("SELECT seq, t, k0, k1, c0 FROM \(CaptureLog.table) WHERE seq > ? AND seq <= ? ORDER BY seq")
        try statement.bind([.integer(after), .integer(through)])
        var groups: [ForeignFold.Group] = []
        var lower = after, last = after, rows: Int64 = 0
        // Each row touched in the transaction being cut: nil once anything but updates of
        // columns touched it, else the columns updated.
        var touched: [ForeignFold.RowKey: Set<Int>?] = [:]
        while try statement.step() {
            let (table, column, op) = CaptureLog.decode(statement.int64(at: 1))
            guard let op, op != .sentinel else { continue }
            var keys = [ForeignFold.RowKey(table: table, key: statement.value(at: 2), second: statement.value(at: 3))]
            if op == .keyChange { keys.append(ForeignFold.RowKey(table: table, key: statement.value(at: 4))) }
            let again = keys.contains { key in
                guard let before = touched[key] else { return false }
                guard op == .update, let columns = before else { return true }
                return columns.contains(column)
            }
            if rows >= unknownGroupSize || again {
                groups.append(ForeignFold.Group(after: lower, through: last, exact: false))
                (lower, rows) = (last, 0)
                touched.removeAll(keepingCapacity: true)
            }
            for key in keys where op != .replaced {
                guard op == .update else { touched[key] = .some(nil); continue }
                let columns: Set<Int> = (touched[key] ?? nil) ?? []
                touched[key] = .some(columns.union([column]))
            }
            rows += 1
            last = statement.int64(at: 0)
        }
        return groups + [ForeignFold.Group(after: lower, through: through, exact: false)]
    }
}
