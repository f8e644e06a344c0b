/// One row of ``CaptureLog``, decoded.
struct CaptureLogRow {
    let seq: Int64
    let table: Int
    let column: Int
    let op: CaptureLog.Op
    let k0: AttributeValue
    let k1: AttributeValue
    /// `c0…`: an update's old value, a deleted or replaced row's columns.
    let values: [AttributeValue]

    /// The rows with `seq` in `(after, through]`, in order; a row of an unknown kind (written
    /// by a newer Tributary, or damaged) is skipped.
    static func read(on db: Connection, after: Int64, through: Int64) throws -> [CaptureLogRow] {
        // Cached: a fold reads one range for each transaction it folds.
        let statement = try db.cachedStatement("SELECT * FROM \(CaptureLog.table) WHERE seq > ? AND seq <= ? ORDER BY seq")
        defer { statement.reset() }
        try statement.bind([.integer(after), .integer(through)])
        var rows: [CaptureLogRow] = []
        while try statement.step() {
            let (table, column, op) = CaptureLog.decode(statement.int64(at: 1))
            guard let op, op != .sentinel else { continue }
            rows.append(CaptureLogRow(seq: statement.int64(at: 0), table: table, column: column, op: op,
                                      k0: statement.value(at: 2), k1: statement.value(at: 3),
                                      // An insert logs its key only: no values to read.
                                      values: op == .insert ? [] : (4..<statement.columnCount).map { FoldValue.read(statement, at: $0) }))
        }
        return rows
    }

    /// The IDs of the tables the rows with `seq` in `(after, through]` were logged for.
    static func tables(on db: Connection, after: Int64, through: Int64) throws -> Set<Int> {
        let statement = try db.makeStatement("SELECT DISTINCT t FROM \(CaptureLog.table) WHERE seq > ? AND seq <= ?")
        try statement.bind([.integer(after), .integer(through)])
        var tables: Set<Int> = []
        while try statement.step() {
            let (table, _, op) = CaptureLog.decode(statement.int64(at: 0))
            if let op, op != .sentinel { tables.insert(table) }
        }
        return tables
    }
}
