import Foundation

/// Runs a ``BatchInsertRequest`` inside the writer's transaction: one cached
/// upsert statement per set of keys given, values bound by type, no objects.
struct BatchInserter {
    let store: PersistentStore
    let table: StoreSchema.Table
    var validator: ValueValidator
    /// Attributes then owned to-one relationships: the table's data columns.
    private let columnNames: [String]
    /// Indexes of the columns an insert writes: all but derived attributes, which
    /// take their column defaults and triggers, except `now()`, bound as the row's time.
    private let writtenColumns: [Int]
    /// Indexes of `now()` attributes: bound with the time of each row's insert. The recorder
    /// then reads no value back from SQLite's row (``HistoryRecorder/recordingBoundInsert(capture:values:_:)``).
    private let nowColumns: [Int]
    /// Relationships whose links live elsewhere (to-many, inverse side of one-to-one).
    private let linkRelationships: [RelationshipDescription]
    private var statements: [UInt64: Statement] = [:]
    /// Insert, then update on a conflict, in two statements instead of one upsert: for
    /// tables with derived attributes' `UPDATE` triggers, which SQLite would code into
    /// every row's upsert (a third slower even when nothing conflicts).
    private let splitsUpsert: Bool
    private var updateStatements: [UInt64: Statement] = [:]
    /// Statements of inserts given primary keys (replicas), by mask.
    private var keyedStatements: [UInt64: Statement] = [:]
    /// Whether a row matching an existing one on a unique constraint also sets the existing
    /// row's relationships given (to-many ones to exactly the objects listed), as NDJSON
    /// imports do. Off for ``BatchInsertRequest``, which leaves them alone.
    var setsLinksOnUpdate = false
    /// Owned to-one relationships whose inverse is to-one: their data column and name. A row
    /// linked to an object takes it from any other row of the table that held it.
    private let oneToOneColumns: [(index: Int, name: String)]
    /// The history recorder's capture of this table when inserted rows are recorded from
    /// the values bound (``HistoryRecorder/recordingBoundInsert(capture:values:_:)``).
    private let boundInsertCapture: Int?
    /// A `WITHOUT ROWID` table's declared key, as indexes of its data columns: its rows are
    /// written with the capture triggers on and found by their key (``executeNumbered``).
    private let declaredKeyColumns: [Int]?

    init(store: PersistentStore, entityName: String) throws {
        self.store = store
        let table = try store.schema.table(entityName)
        self.table = table
        self.validator = ValueValidator(table: table)
        self.columnNames = table.dataColumns
        self.writtenColumns = table.dataColumns.indices.filter { $0 >= table.attributes.count || table.attributes[$0].isBoundByInserts }
        self.nowColumns = table.attributes.indices.filter { table.attributes[$0].derivation == .now }
        self.boundInsertCapture = store.recorder.boundInsertCapture(table: entityName)
        self.declaredKeyColumns = table.keyMap.map { map in map.keyColumns.compactMap { table.columnIndex[$0] } }
        self.splitsUpsert = !table.entity.uniquenessConstraints.isEmpty && store.schema.tablesWithUpdateTriggers.contains(entityName)
        self.oneToOneColumns = table.foreignKeys.enumerated().compactMap { j, relationship in
            let inverse = try? store.schema.table(relationship.destinationEntity).entity.relationship(named: relationship.inverseName)
            return inverse?.isToMany == false ? (table.attributes.count + j, table.dataColumns[table.attributes.count + j]) : nil
        }
        self.linkRelationships = table.entity.relationships.filter { relationship in
            if case .foreignKeyHere = table.storage[relationship.name]! { return false }
            return true
        }
    }

    /// Inserts or updates every object; throws (and the caller's transaction rolls back) on the first bad one.
    mutating func run(_ objects: [[String: AttributeValue]], primaryKeys: [Int64] = [], resultType: BatchResultType, on db: Connection) throws -> BatchResult {
        if runsNumbered(on: db) {
            return try store.writingThroughCaptureTriggers(on: db) { try run(objects, primaryKeys: primaryKeys, resultType: resultType, on: db) }
        }
        guard primaryKeys.isEmpty || primaryKeys.count == objects.count else {
            throw TributaryError(.invalidInput, "\(primaryKeys.count) primary keys for \(objects.count) objects", location: table.name, hint: "give one primary key per object, or none")
        }
        var result = BatchResult()
        var values = [AttributeValue](repeating: .null, count: columnNames.count)
        let attributes = table.attributes
        let foreignKeys = table.foreignKeys
        // Per-column facts, hoisted out of the row loop.
        let names = attributes.map(\.name)
        let types = attributes.map(\.type)
        let defaults: [AttributeValue?] = try attributes.map { attribute in try attribute.defaultValue.map { try validator.attributeValue($0, attribute, row: nil) } }
        let optional = attributes.map(\.isOptional)
        let derived = attributes.map(\.isDerived)
        for (row, object) in objects.enumerated() {
            var mask: UInt64 = 0
            var matched = 0
            for i in 0..<names.count {
                if let given = object[names[i]] {
                    if derived[i] { throw validator.derived(names[i], row: row) }
                    matched += 1
                    mask |= 1 << UInt64(i)
                    values[i] = given.matches(types[i]) ? given : try validator.attributeValue(given, attributes[i], row: row)
                } else if let value = defaults[i] {
                    values[i] = value
                } else if optional[i] || derived[i] {
                    values[i] = .null
                } else {
                    throw validator.missing(names[i], row: row)
                }
            }
            for (j, relationship) in foreignKeys.enumerated() {
                let i = attributes.count + j
                if let given = object[relationship.name] {
                    matched += 1
                    mask |= 1 << UInt64(i)
                    values[i] = try validator.targetKey(given, relationship, row: row)
                } else if relationship.isOptional {
                    values[i] = .null
                } else {
                    throw validator.missing(relationship.name, row: row)
                }
            }
            var links: [(RelationshipDescription, AttributeValue)] = []
            if matched < object.count {
                for relationship in linkRelationships {
                    if let given = object[relationship.name] {
                        matched += 1
                        links.append((relationship, given))
                    }
                }
            }
            if matched != object.count {
                let known = Set(table.entity.propertyNames)
                let unknown = object.keys.sorted().first { !known.contains($0) } ?? "?"
                throw validator.unknownKey(unknown, row: row)
            }
            stampNow(&values)
            if primaryKeys.isEmpty {
                let statement = try self.statement(mask: mask, on: db)
                try execute(statement, mask: mask, values: values, row: row, resultType: resultType, links: links, result: &result, on: db)
            } else {
                let statement = try keyedStatement(mask: mask, on: db)
                if declaredKeyColumns == nil { try statement.bind(.integer(primaryKeys[row]), at: Int32(writtenColumns.count + 1)) }
                try execute(statement, mask: mask, values: values, row: row, resultType: resultType, links: links, result: &result, on: db, key: primaryKeys[row])
            }
        }
        return result
    }

    /// Inserts or updates rows given as arrays of values in `columns` order.
    /// With `primaryKeys` (one per row), each row gets its key, as in the dictionary form.
    mutating func run(columns: [String], rows: [[AttributeValue]], primaryKeys: [Int64] = [], resultType: BatchResultType, on db: Connection) throws -> BatchResult {
        if runsNumbered(on: db) {
            return try store.writingThroughCaptureTriggers(on: db) { try run(columns: columns, rows: rows, primaryKeys: primaryKeys, resultType: resultType, on: db) }
        }
        guard primaryKeys.isEmpty || primaryKeys.count == rows.count else {
            throw TributaryError(.invalidInput, "\(primaryKeys.count) primary keys for \(rows.count) rows", location: table.name, hint: "give one primary key per row, or none")
        }
        var result = BatchResult()
        var values = [AttributeValue](repeating: .null, count: columnNames.count)
        // Where each given column goes, and how to check it.
        var targets: [Int] = []
        var mask: UInt64 = 0
        for name in columns {
            guard let index = table.columnIndex[name] else {
                if table.entity.relationship(named: name) != nil {
                    throw TributaryError(.invalidInput, "the columnar form takes attributes and to-one relationships; '\(name)' is to-many", location: table.name, hint: "use the dictionary form to set to-many relationships")
                }
                throw validator.unknownKey(name, row: nil)
            }
            if index < table.attributes.count, table.attributes[index].isDerived { throw validator.derived(name, row: nil) }
            guard mask & (1 << UInt64(index)) == 0 else {
                throw TributaryError(.invalidInput, "column '\(name)' is given twice", location: table.name)
            }
            targets.append(index)
            mask |= 1 << UInt64(index)
        }
        // Columns not given: defaults, nil, or a missing value.
        for (i, attribute) in table.attributes.enumerated() where mask & (1 << UInt64(i)) == 0 {
            if let value = attribute.defaultValue {
                values[i] = try validator.attributeValue(value, attribute, row: nil)
            } else if !attribute.isOptional && !attribute.isDerived {
                throw validator.missing(attribute.name, row: nil)
            }
        }
        for (j, relationship) in table.foreignKeys.enumerated() where mask & (1 << UInt64(table.attributes.count + j)) == 0 && !relationship.isOptional {
            throw validator.missing(relationship.name, row: nil)
        }
        let attributeCount = table.attributes.count
        let types = table.attributes.map(\.type)
        let statement = primaryKeys.isEmpty ? try self.statement(mask: mask, on: db) : try keyedStatement(mask: mask, on: db)
        let keyIndex = Int32(writtenColumns.count + 1)
        for (row, given) in rows.enumerated() {
            guard given.count == targets.count else {
                throw TributaryError(.invalidInput, "row has \(given.count) values for \(targets.count) columns", location: validator.place(row), hint: "give one value per column, in order")
            }
            for (k, index) in targets.enumerated() {
                let value = given[k]
                if index < attributeCount {
                    values[index] = value.matches(types[index]) ? value : try validator.attributeValue(value, table.attributes[index], row: row)
                } else {
                    values[index] = try validator.targetKey(value, table.foreignKeys[index - attributeCount], row: row)
                }
            }
            stampNow(&values)
            if primaryKeys.isEmpty {
                try execute(statement, mask: mask, values: values, row: row, resultType: resultType, links: [], result: &result, on: db)
            } else {
                if declaredKeyColumns == nil { try statement.bind(.integer(primaryKeys[row]), at: keyIndex) }
                try execute(statement, mask: mask, values: values, row: row, resultType: resultType, links: [], result: &result, on: db, key: primaryKeys[row])
            }
        }
        return result
    }

    /// Runs the upsert for one row and accounts for it.
    @inline(__always)
    private mutating func execute(_ statement: Statement, mask: UInt64, values: [AttributeValue], row: Int, resultType: BatchResultType, links: [(RelationshipDescription, AttributeValue)], result: inout BatchResult, on db: Connection, key givenKey: Int64? = nil) throws {
        if let declaredKeyColumns {
            return try executeNumbered(statement, key: declaredKeyColumns.map { values[$0] }, values: values, row: row, resultType: resultType, result: &result, on: db, number: givenKey)
        }
        for (k, i) in writtenColumns.enumerated() { try statement.bind(values[i], at: Int32(k + 1)) }
        // An upsert that updates leaves last_insert_rowid alone: reset it to tell the cases apart.
        db.lastInsertRowID = 0
        do {
            if let boundInsertCapture {
                try store.recorder.recordingBoundInsert(capture: boundInsertCapture, values: values) { try statement.run() }
            } else {
                try statement.run()
            }
        } catch let error as SQLiteError {
            throw UniqueViolation.translate(error, table: table, place: validator.place(row))
        }
        statement.rewind()
        let insertedKey = db.lastInsertRowID
        // Neither inserted nor updated: a trigger of the database's own skipped it (RAISE(IGNORE)).
        // A split upsert's DO NOTHING changes nothing either; its update below finds the row, or
        // none (a keyed insert's statement updates in itself).
        if insertedKey == 0, !splitsUpsert || givenKey != nil, db.changes == 0 {
            result.ignored += 1
            return
        }
        if insertedKey != 0 {
            result.count += 1
            result.inserted += 1
            if resultType == .objectIDs { result.objectIDs.append(store.objectID(entity: table.name, primaryKey: insertedKey)) }
            for (relationship, value) in links {
                try link(insertedKey, relationship, value, row: row, on: db)
            }
            try detachOtherOwners(of: insertedKey, mask: mask, values: values, on: db)
        } else {
            if let givenKey {
                result.count += 1
                result.updated += 1
                // A keyed insert updates the row with its key in the same statement.
                if resultType == .objectIDs { result.objectIDs.append(store.objectID(entity: table.name, primaryKey: givenKey)) }
                try detachOtherOwners(of: givenKey, mask: mask, values: values, on: db)
                return
            }
            let setsOneToOne = oneToOneColumns.contains { mask & (1 << UInt64($0.index)) != 0 }
            let relinks = setsLinksOnUpdate && !links.isEmpty
            let key = splitsUpsert || resultType == .objectIDs || relinks || setsOneToOne ? try matchedKey(values, on: db) : 0
            if splitsUpsert {
                guard key != 0, try update(key, mask: mask, values: values, row: row, on: db) else {
                    result.ignored += 1
                    return
                }
            }
            result.count += 1
            result.updated += 1
            if setsOneToOne { try detachOtherOwners(of: key, mask: mask, values: values, on: db) }
            if relinks {
                // Links the row had and is not given go.
                for (relationship, value) in links {
                    try link(key, relationship, value, row: row, replacing: true, on: db)
                }
            }
            if resultType == .objectIDs { result.objectIDs.append(store.objectID(entity: table.name, primaryKey: key)) }
        }
    }

    /// Sets the `now()` attributes of a row about to be inserted.
    @inline(__always)
    private func stampNow(_ values: inout [AttributeValue]) {
        guard !nowColumns.isEmpty else { return }
        let now = AttributeValue.date(Date(timeIntervalSince1970: Self.sqliteNow()))
        for i in nowColumns { values[i] = now }
    }

    /// The current time as SQLite's `now()` default gives it (``DerivedAttributeTriggers/nowSQL``):
    /// whole milliseconds, through the Julian day.
    static func sqliteNow() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        let milliseconds = Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
        let julianDay = Double(milliseconds + 210_866_760_000_000) / 86_400_000.0
        return (julianDay - 2_440_587.5) * 86_400.0
    }

    /// The update half of a split upsert: the given values on the row that conflicted; false
    /// when a trigger of the database's own skipped it (`RAISE(IGNORE)`).
    private mutating func update(_ key: Int64, mask: UInt64, values: [AttributeValue], row: Int, on db: Connection) throws -> Bool {
        let given = columnNames.indices.filter { mask & (1 << UInt64($0)) != 0 }
        let statement: Statement
        if let cached = updateStatements[mask] {
            statement = cached
        } else {
            let assignments = table.assignments(given.map { "\(quote(columnNames[$0])) = ?" })
            statement = try db.cachedStatement("UPDATE \(table.writtenTable) SET \(assignments) WHERE \(table.objectKey("= ?"))")
            updateStatements[mask] = statement
        }
        for (k, i) in given.enumerated() { try statement.bind(values[i], at: Int32(k + 1)) }
        try statement.bind(.integer(key), at: Int32(given.count + 1))
        do {
            try statement.run()
        } catch let error as SQLiteError {
            throw UniqueViolation.translate(error, table: table, place: validator.place(row))
        }
        statement.rewind()
        return db.changes > 0
    }

    /// The insert of a row with its primary key given, updating the row holding that key and
    /// no other (a conflict on another unique column fails, as on the source it could not
    /// happen). A `WITHOUT ROWID` table binds no key: its number is claimed in the map first
    /// (``executeNumbered``), and the row conflicts on its declared key only.
    private mutating func keyedStatement(mask: UInt64, on db: Connection) throws -> Statement {
        if let statement = keyedStatements[mask] { return statement }
        let numbered = table.keyMap
        let columns = (writtenColumns.map { quote(columnNames[$0]) } + (numbered == nil ? [table.key] : [])).joined(separator: ", ")
        let marks = Array(repeating: "?", count: writtenColumns.count + (numbered == nil ? 1 : 0)).joined(separator: ", ")
        let updates = columnNames.enumerated().filter { mask & (1 << UInt64($0.offset)) != 0 }.map { "\(quote($0.element)) = excluded.\(quote($0.element))" }
        let target = numbered.map { $0.keyColumns.map(quote).joined(separator: ", ") } ?? table.key
        let sql = "INSERT INTO \(table.writtenTable) (\(columns)) VALUES (\(marks)) ON CONFLICT (\(target)) DO UPDATE SET \(table.assignments(updates))"
        let statement = try db.cachedStatement(sql)
        keyedStatements[mask] = statement
        return statement
    }

    private mutating func statement(mask: UInt64, on db: Connection) throws -> Statement {
        let key = mask
        if let statement = statements[key] { return statement }
        let columns = writtenColumns.map { quote(columnNames[$0]) }.joined(separator: ", ")
        let marks = Array(repeating: "?", count: writtenColumns.count).joined(separator: ", ")
        var sql = "INSERT INTO \(table.writtenTable) (\(columns)) VALUES (\(marks))"
        let updates = columnNames.enumerated().filter { mask & (1 << UInt64($0.offset)) != 0 }.map { "\(quote($0.element)) = excluded.\(quote($0.element))" }
        if splitsUpsert {
            sql += " ON CONFLICT DO NOTHING"
        } else {
            for constraint in table.entity.uniquenessConstraints {
                sql += " ON CONFLICT (\(constraint.map(quote).joined(separator: ", "))) DO UPDATE SET \(table.assignments(updates))"
            }
        }
        let statement = try db.cachedStatement(sql)
        statements[key] = statement
        return statement
    }

    /// The key of the existing row an upsert updated: the first unique constraint it matches.
    private func matchedKey(_ values: [AttributeValue], on db: Connection) throws -> Int64 {
        for constraint in table.entity.uniquenessConstraints {
            let columns = constraint.map { table.columnIndex[$0]! }
            let condition = constraint.map { "\(quote($0)) = ?" }.joined(separator: " AND ")
            if let key = try db.scalar("SELECT \(table.key) FROM \(quote(table.name)) WHERE \(condition)", columns.map { values[$0] })?.integerValue {
                return key
            }
        }
        return 0
    }

    /// Sets a relationship stored outside this row: for a newly inserted row, or, `replacing`,
    /// for an existing one, whose links to objects not in `value` are removed.
    private func link(_ key: Int64, _ relationship: RelationshipDescription, _ value: AttributeValue, row: Int, replacing: Bool = false, on db: Connection) throws {
        switch table.storage[relationship.name]! {
        case .joinTable(let joinTable, let sourceColumn, let destinationColumn):
            let targets = try validator.targetKeys(value, relationship, row: row)
            if replacing {
                try db.execute("DELETE FROM \(quote(joinTable)) WHERE \(quote(sourceColumn)) = ? AND \(quote(destinationColumn)) NOT IN (SELECT value FROM json_each(?))",
                               [.integer(key), .keyList(targets)])
            }
            for target in targets {
                try db.execute("INSERT OR IGNORE INTO \(quote(joinTable)) (\(quote(sourceColumn)), \(quote(destinationColumn))) VALUES (?, ?)", [.integer(key), .integer(target)])
            }
        case .foreignKeyOnDestination(let column):
            let targets = relationship.isToMany
                ? try validator.targetKeys(value, relationship, row: row)
                : [try validator.targetKey(value, relationship, row: row)].compactMap(\.integerValue)
            let destination = table.destinationTable(relationship.name, relationship.destinationEntity)
            let bump = table.destinationVersionBump(relationship.name)
            if replacing {
                let others = table.destinationObjectKey(relationship.name, "NOT IN (SELECT value FROM json_each(?))")
                try db.execute("UPDATE \(destination) SET \(quote(column)) = NULL\(bump) WHERE \(quote(column)) = ? AND \(others)", [.integer(key), .keyList(targets)])
            } else if !relationship.isToMany {
                try db.execute("UPDATE \(destination) SET \(quote(column)) = NULL\(bump) WHERE \(quote(column)) = ?", [.integer(key)])
            }
            let isTarget = table.destinationObjectKey(relationship.name, "= ?")
            for target in targets {
                try db.execute("UPDATE \(destination) SET \(quote(column)) = ?\(bump) WHERE \(isTarget) AND \(quote(column)) IS NOT ?", [.integer(key), .integer(target), .integer(key)])
            }
        case .foreignKeyHere:
            break
        }
    }

    /// Clears the one-to-one links that other rows of the table hold to the objects row `key`
    /// was just linked to, so each such object keeps one owner.
    private func detachOtherOwners(of key: Int64, mask: UInt64, values: [AttributeValue], on db: Connection) throws {
        for (index, name) in oneToOneColumns where mask & (1 << UInt64(index)) != 0 {
            guard case .integer(let target) = values[index] else { continue }
            try db.execute("UPDATE \(table.writtenTable) SET \(quote(name)) = NULL\(table.versionBump) WHERE \(quote(name)) = ? AND NOT \(table.objectKey("= ?"))", [.integer(target), .integer(key)])
        }
    }

    /// Whether the write may reach a `WITHOUT ROWID` table (this one, or one its links lead to)
    /// and the stored triggers are not on yet: its rows are then written through them.
    private func runsNumbered(on db: Connection) -> Bool {
        table.reachesWithoutRowid && !db.runsMainTriggers
    }

    /// Runs the upsert of one row of a `WITHOUT ROWID` table, with its capture triggers on,
    /// and accounts for it. The object is the row the upsert updated (found first by the
    /// unique constraints, the declared key among them), else the row inserted, numbered by
    /// the triggers in the ``KeyMap``. A replica's insert gives the source's `number`, which
    /// the map takes first, and meets only the row with its key (``keyedStatement(mask:on:)``);
    /// a replica that numbered the key otherwise is refused rather than renumbered. Links and
    /// derived attributes need nothing here: no relationship's links are stored in such a
    /// table's rows but its own to-ones, and an adopted table has no derived attributes.
    private mutating func executeNumbered(_ statement: Statement, key: [AttributeValue], values: [AttributeValue], row: Int, resultType: BatchResultType,
                                          result: inout BatchResult, on db: Connection, number: Int64?) throws {
        guard let map = table.keyMap else { return }
        if let number, try !map.claim(number, for: key, on: db) {
            throw TributaryError(.invalidInput, "\(table.name)/p\(number) cannot take its number here: this database numbers \(table.name)'s rows otherwise",
                                 location: validator.place(row), hint: "replay into a database whose \(table.name) table was empty when it was adopted")
        }
        // The row the upsert will update, if any: its number stays when the update moves its key.
        let updated = number == nil ? try matchedKey(values, on: db) : try map.number(of: key, on: db) ?? 0
        for (k, i) in writtenColumns.enumerated() { try statement.bind(values[i], at: Int32(k + 1)) }
        do {
            try statement.run()
        } catch let error as SQLiteError {
            throw UniqueViolation.translate(error, table: table, place: validator.place(row))
        }
        statement.rewind()
        if db.changes == 0 {
            result.ignored += 1   // a trigger of the database's own skipped it (RAISE(IGNORE))
            return
        }
        result.count += 1
        if updated != 0 { result.updated += 1 } else { result.inserted += 1 }
        guard let object = updated != 0 ? updated : try map.number(of: key, on: db) else {
            throw TributaryError(.objectNotFound, "the row inserted into \(table.name) has no number in \(map.name)", location: validator.place(row),
                                 hint: "its capture triggers may be missing: open the store again to reinstall them")
        }
        if resultType == .objectIDs { result.objectIDs.append(store.objectID(entity: table.name, primaryKey: object)) }
    }
}

/// Turns SQLite's unique-constraint failures into errors naming the entity and attributes.
enum UniqueViolation {
    static func translate(_ error: SQLiteError, table: StoreSchema.Table, place: String) -> Error {
        guard error.code == .constraintUnique || error.code == .constraintPrimaryKey else { return error }
        // SQLite says "UNIQUE constraint failed: Post.externalID, Post.title".
        let columns = error.message.components(separatedBy: ": ").last?
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).split(separator: ".").last.map(String.init) ?? "" } ?? []
        let names = columns.joined(separator: ", ")
        return TributaryError(.uniqueConstraint, "two \(table.name) rows would have the same \(names)", location: place,
                              hint: "\(names) must be unique in \(table.name); change the value or update the existing row instead")
    }
}
