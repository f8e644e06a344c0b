/// The backward walk of ``ForeignFold``: each touched row's state (its captured
/// columns, or nil when absent), from the rows as they are now back to the start of
/// the oldest transaction folded, one transaction at a time.
struct StateWalk {
    typealias RowKey = ForeignFold.RowKey

    /// One row a transaction touched: its states at the transaction's start and end, and
    /// where key changes took it: `movedFrom` is the key the row that ends here started at,
    /// `movedTo` the key the row that starts here ended at (nil unless a key change moved it).
    struct Span {
        let key: RowKey
        let start: [AttributeValue]?
        let end: [AttributeValue]?
        var movedFrom: RowKey?
        var movedTo: RowKey?
    }

    let fold: ForeignFold
    /// Each table's name in the database now, by ID (``ForeignFold/locate(_:on:)``).
    let names: [Int: String]
    let db: Connection
    /// The states known so far at the walk's current point (nil inside: absent), but for
    /// rows of an integer key known absent, which are in `absent`.
    private var states: [RowKey: [AttributeValue]?] = [:]
    /// Rows known absent at the walk's point, by table, by integer key: a fold of a large
    /// insert holds an integer for each row walked back past its insert, not a state.
    private var absent: [Int: Set<Int64>] = [:]
    /// New key → old key of a key change, for the same statement's column updates the
    /// walk meets after it (SQLite fires the triggers of one update in no set order).
    private var moved: [RowKey: RowKey] = [:]
    /// Within a transaction's walk: the key each row present at the walk's point has at the
    /// transaction's end, by its key at that point (a row inserted later has none).
    private var endKeys: [RowKey: RowKey] = [:]
    /// The columns each captured table has now, by table ID (read once per walk).
    private var present: [Int: Set<String>] = [:]
    /// The names captured columns have now where another program renamed them, by table ID
    /// (read once per walk; ``CaptureInstaller/renamedColumns(of:on:)``).
    private var renamed: [Int: [String: String]] = [:]
    /// The captured columns another program dropped, by table ID (read once per walk).
    private var gone: [Int: [Int]] = [:]

    init(fold: ForeignFold, names: [Int: String], db: Connection) {
        self.fold = fold
        self.names = names
        self.db = db
    }

    /// Walks back over one transaction's rows: each row it touched, in order of first
    /// touch, with its state at the transaction's start and end and the keys it moved between.
    mutating func span(_ rows: ArraySlice<CaptureLogRow>) throws -> [Span] {
        // Arrays by order of first touch rather than more tables keyed by row: a large fold holds one entry per row.
        var order: [RowKey] = []
        var index: [RowKey: Int] = [:]
        for row in rows {
            for key in keys(of: row) where index[key] == nil {
                index[key] = order.count
                order.append(key)
            }
        }
        var ends = [[AttributeValue]?](repeating: nil, count: order.count)
        var endRead = [Bool](repeating: false, count: order.count)
        endKeys.removeAll()
        for row in rows.reversed() {
            for key in keys(of: row) {
                let i = index[key]!
                guard !endRead[i] else { continue }
                endRead[i] = true
                ends[i] = try state(key)
                if ends[i] != nil { endKeys[key] = key }
            }
            try apply(row)
        }
        var spans = try order.indices.map { Span(key: order[$0], start: try state(order[$0]), end: ends[$0]) }
        for (start, end) in endKeys where start != end {
            if let i = index[start] { spans[i].movedTo = end }
            if let i = index[end] { spans[i].movedFrom = start }
        }
        return spans
    }

    /// The rows `row` touched; none when its table's rows cannot be read (``ForeignFold/locate(_:on:)``).
    private func keys(of row: CaptureLogRow) -> [RowKey] {
        guard names[row.table] != nil, let table = fold.tables[row.table] else { return [] }
        if table.kind == .join { return [RowKey(table: row.table, key: row.k0, second: row.k1)] }
        let key = RowKey(table: row.table, key: row.k0)
        if row.op == .keyChange, let old = row.values.first { return [key, RowKey(table: row.table, key: old)] }
        return [key]
    }

    /// Steps back over one row: the state before it.
    private mutating func apply(_ row: CaptureLogRow) throws {
        guard let key = keys(of: row).first, let table = fold.tables[row.table] else { return }
        let width = table.columns.count
        let logged = Array(row.values.prefix(width)) + Array(repeating: AttributeValue.null, count: max(0, width - row.values.count))
        switch row.op {
        case .sentinel:
            return
        case .insert:
            set(key, nil)
            endKeys[key] = nil
        case .update:
            var target = key
            if try state(key) == nil, let old = moved[key] { target = old }
            var values = try state(target) ?? Array(repeating: .null, count: width)
            if row.column < values.count, let old = row.values.first { values[row.column] = old }
            set(target, values)
        case .keyChange:
            guard let oldKey = row.values.first else { return }
            let old = RowKey(table: row.table, key: oldKey)
            set(old, try state(key) ?? Array(repeating: .null, count: width))
            set(key, nil)
            moved[key] = old
            if let end = endKeys.removeValue(forKey: key) { endKeys[old] = end }
        case .delete:
            set(key, table.kind == .join ? [] : logged)
        case .replaced:
            // Logged before an insert or a key change: the row went only if it is absent right after.
            if try state(key) == nil { set(key, logged) }
        }
    }

    private mutating func presentColumns(_ table: CapturedTable) throws -> Set<String> {
        if let known = present[table.id] { return known }
        let statement = try db.cachedStatement("SELECT name FROM pragma_table_info(?, 'main')")
        try statement.bind([.string(name(of: table))])
        defer { statement.reset() }
        var names: Set<String> = []
        while try statement.step() { names.insert(statement.string(at: 0)) }
        present[table.id] = names
        return names
    }

    /// The indices of `table`'s captured columns another program dropped since.
    private mutating func goneColumns(_ table: CapturedTable) throws -> [Int] {
        if let known = gone[table.id] { return known }
        let (present, now) = (try presentColumns(table), try renamedColumns(table))
        let indices = table.columns.indices.filter { !present.contains(now[table.columns[$0]] ?? table.columns[$0]) }
        gone[table.id] = indices
        return indices
    }

    private mutating func renamedColumns(_ table: CapturedTable) throws -> [String: String] {
        if let known = renamed[table.id] { return known }
        let now = try CaptureInstaller.renamedColumns(of: table, on: db)
        renamed[table.id] = now
        return now
    }

    private func name(of table: CapturedTable) -> String { names[table.id] ?? table.name }

    private mutating func set(_ key: RowKey, _ values: [AttributeValue]?) {
        guard case .integer(let integer) = key.key, key.second == .null else {
            states[key] = .some(values)
            return
        }
        if values == nil {
            states.removeValue(forKey: key)
            absent[key.table, default: []].insert(integer)
        } else {
            states[key] = .some(values)
            absent[key.table]?.remove(integer)
        }
    }

    /// The row's state at the walk's point, read from the table the first time.
    private mutating func state(_ key: RowKey) throws -> [AttributeValue]? {
        if let known = states[key] { return known }
        if case .integer(let integer) = key.key, key.second == .null, absent[key.table]?.contains(integer) == true { return nil }
        guard let table = fold.tables[key.table] else { return nil }
        let statement: Statement
        switch table.kind {
        case .entity:
            // A column another program dropped since the capture was installed reads as NULL
            // (unqualified, SQLite would read its quoted name as a string), then as gone.
            // A column another program renamed is read by its name now: the log rows logged
            // before the rename hold its values under the name it was captured by.
            let present = try presentColumns(table)
            let now = try renamedColumns(table)
            let columns = table.columns.isEmpty ? "1" : table.columns.map { now[$0] ?? $0 }.map {
                present.contains($0) ? "\(quote(name(of: table))).\(quote($0))" : "NULL"
            }.joined(separator: ", ")
            let keyColumn = now[table.keyColumns[0]] ?? table.keyColumns[0]
            statement = try db.cachedStatement("SELECT \(columns) FROM \(quote(name(of: table))) WHERE \(quote(keyColumn)) = ?")
            try statement.bind([key.key])
        case .join:
            statement = try db.cachedStatement("SELECT 1 FROM \(quote(name(of: table))) WHERE \"src\" = ? AND \"dst\" = ?")
            try statement.bind([key.key, key.second])
        }
        defer { statement.reset() }
        var values: [AttributeValue]?
        if try statement.step() {
            values = table.kind == .join || table.columns.isEmpty ? [] : (0..<table.columns.count).map { FoldValue.read(statement, at: $0) }
            if table.kind == .entity, case let gone = try goneColumns(table), !gone.isEmpty, var read = values {
                for j in gone { read[j] = FoldValue.gone }
                values = read
            }
        }
        if fold.unwatched.contains(table.id) { values = unwatchedState(values, of: table) }
        set(key, values)
        return values
    }

    /// A row of a table whose triggers were gone, as read now (`read`, nil when absent): its
    /// rows may hold writes no trigger logged since, so the walk takes present, with its
    /// declared key as it reads now and every other value unknown (``FoldValue/gone``).
    private func unwatchedState(_ read: [AttributeValue]?, of table: CapturedTable) -> [AttributeValue] {
        guard table.kind == .entity else { return [] }
        let keys = Set(fold.schema.tables[table.name]?.entity.declaredKey ?? [])
        return table.columns.indices.map { j in
            guard let read, keys.contains(table.columns[j]), j < read.count else { return FoldValue.gone }
            return read[j]
        }
    }
}
