import Foundation
import PostgresNIO
import Tributary
import TributaryPipeline
import TributaryStreams

/// A batch of records folded into the few statements that leave PostgreSQL as applying the
/// records one by one would: per row, the last state wins (a create or snapshot read sets the
/// row, an update merges its `after` values into what the batch already holds, a delete drops
/// what the batch held for the row); per many-to-many link, the last add or remove wins. The
/// statements run deletes first (rows, and the links of deleted objects), then link removals,
/// then `INSERT … SELECT * FROM unnest($1, …) ON CONFLICT ("_pk") DO UPDATE` upserts (one
/// typed array per column; multi-row `VALUES` when a value does not fit its column's type)
/// grouped by the columns they set, then link additions. Unique constraints are deferred to the commit, so the
/// order of rows inside a batch cannot trip them.
///
/// ```swift
/// let batch = try PostgresBatch(records, schema: schema)
/// for statement in batch.statements { try await connection.query(statement, logger: logger) }
/// ```
struct PostgresBatch {
    private struct RowKey: Hashable {
        /// The table's number among the names the batch met (``TableState/nameID``).
        var table: Int
        var key: Int64
    }

    private struct LinkKey: Hashable {
        var table: String
        var source: Int64
        var destination: Int64
    }

    /// A row's state in the batch. Values of the table's columns are kept by column position
    /// (a batch folds many rows: no dictionary per row); a table that takes any column keeps
    /// them by name.
    private struct Row {
        var key: RowKey
        var table: Int
        /// Where the row's values start in `cells` (one per column of its table).
        var base: Int
        var width: Int
        var named: [String: AttributeValue] = [:]
        var insertsBareRow: Bool
        /// False once a later delete of the batch dropped it.
        var live = true
    }

    /// A table the batch touches, with its columns' positions.
    private struct TableState {
        var table: PostgresMirrorSchema.Table
        var columnIndex: [String: Int]
        /// The column of each property position as last seen: records of an entity list their
        /// properties in the same order, so names are compared, not hashed.
        var propertyNames: [String] = []
        var propertyColumns: [Int] = []
        /// One number per table name (two entities renamed to one table share it).
        var nameID: Int
    }

    /// PostgreSQL takes at most 65,535 parameters per statement; stay well below.
    static let maximumParameters = 30_000

    private(set) var statements: [PostgresQuery] = []
    private var tables: [TableState] = []
    private var tableIndex: [String: Int] = [:]
    private var nameIDs: [String: Int] = [:]
    /// The last entity looked up and its table state: records of one entity come in runs.
    private var lastEntity: (name: String, table: Int)?
    /// Rows in the order they were first set; `rowIndex` finds a live row's place.
    private var rowList: [Row] = []
    /// Every row's column values, row after row (no array per row).
    private var cells: [AttributeValue?] = []
    private var rowIndex: [RowKey: Int] = [:]
    private var deletes: [String: [Int64]] = [:]
    private var deleteOrder: [String] = []
    private var deletedObjects: [String: [Int64]] = [:]
    private var links: [LinkKey: Bool] = [:]
    private var linkOrder: [LinkKey] = []

    /// Folds `records` (in position order) into statements against `schema`, first emptying
    /// the tables of the entities in `clearing` (and the join tables they own). A record of a
    /// name the model does not know goes to the existing table of that name (PostgreSQL
    /// refuses it if there is none).
    init<Records: Sequence>(_ records: Records, schema: PostgresMirrorSchema, clearing: [String] = []) throws where Records.Element == StreamRecord {
        for entity in clearing {
            let table = schema.table(forRecordEntity: entity)
            statements.append(PostgresQuery(unsafeSQL: "DELETE FROM \(schema.qualified(table.name))"))
            for join in table.joinTables.values.sorted() { statements.append(PostgresQuery(unsafeSQL: "DELETE FROM \(schema.qualified(join))")) }
        }
        for record in records { add(record, schema: schema) }
        try makeStatements(schema: schema)
    }

    /// The entities whose tables a batch must empty before it applies `records`: a snapshot
    /// replaces its entities' rows, so the first record of each entity in a snapshot (one
    /// at another token than the last applied record, or of another entity) starts its table
    /// over; `last` is the last applied record's position and entity.
    static func entitiesToClear<Records: Sequence>(_ records: Records, after last: (position: StreamPosition, entity: String?)?) -> [String] where Records.Element == StreamRecord {
        var current = last
        var clearing: [String] = []
        for record in records {
            if record.position.isSnapshot, !(current.map { $0.position.isSnapshot && $0.position.token == record.position.token && $0.entity == record.entityName } ?? false) {
                if !clearing.contains(record.entityName) { clearing.append(record.entityName) }
            }
            current = (record.position, record.entityName)
        }
        return clearing
    }

    /// The batch's index of the table for `entity`.
    private mutating func tableState(for entity: String, schema: PostgresMirrorSchema) -> Int {
        if let lastEntity, lastEntity.name == entity { return lastEntity.table }
        if let index = tableIndex[entity] {
            lastEntity = (entity, index)
            return index
        }
        let table = schema.table(forRecordEntity: entity)
        let index = tables.count
        let nameID = nameIDs[table.name] ?? nameIDs.count
        nameIDs[table.name] = nameID
        tables.append(TableState(table: table, columnIndex: Dictionary(table.columns.enumerated().map { ($0.element.name, $0.offset) }, uniquingKeysWith: { a, _ in a }),
                                 nameID: nameID))
        tableIndex[entity] = index
        lastEntity = (entity, index)
        return index
    }

    /// A new row state for `key`, replacing any the batch held.
    private mutating func startRow(_ key: RowKey, table: Int, insertsBareRow: Bool) -> Int {
        if let old = rowIndex[key] { rowList[old].live = false }
        rowIndex[key] = rowList.count
        let width = tables[table].table.columns.count
        rowList.append(Row(key: key, table: table, base: cells.count, width: width, insertsBareRow: insertsBareRow))
        cells.append(contentsOf: repeatElement(nil, count: width))
        return rowList.count - 1
    }

    private mutating func add(_ record: StreamRecord, schema: PostgresMirrorSchema) {
        let tableNumber = tableState(for: record.entityName, schema: schema)
        let key = RowKey(table: tables[tableNumber].nameID, key: record.objectID.primaryKey)
        var row: Int?
        switch record.operation {
        case .delete:
            let table = tables[tableNumber].table
            if let index = rowIndex.removeValue(forKey: key) { rowList[index].live = false }
            if deletes[table.name] == nil { deleteOrder.append(table.name) }
            deletes[table.name, default: []].append(key.key)
            deletedObjects[table.entity.name, default: []].append(key.key)
            for join in schema.joinTables where join.sourceEntity == table.entity.name || join.destinationEntity == table.entity.name {
                for link in linkOrder where link.table == join.name
                    && ((join.sourceEntity == table.entity.name && link.source == key.key) || (join.destinationEntity == table.entity.name && link.destination == key.key)) {
                    links[link] = nil
                }
            }
            return
        case .create, .read:
            row = startRow(key, table: tableNumber, insertsBareRow: true)
        case .update:
            row = rowIndex[key]
        }
        let takesAnyColumn = tables[tableNumber].table.takesAnyColumn
        record.properties.withUnsafeBufferPointer { properties in
            for (position, property) in properties.enumerated() {
                if property.isMembershipChange {
                    guard let link = tables[tableNumber].table.links[property.name] else { continue }
                    for object in property.removed { setLink(link, object: key.key, other: object.primaryKey, present: false) }
                    for object in property.added { setLink(link, object: key.key, other: object.primaryKey, present: true) }
                    continue
                }
                guard !property.isValueExcluded, let value = property.after else { continue }
                if takesAnyColumn {
                    let index = row ?? startRow(key, table: tableNumber, insertsBareRow: false)
                    row = index
                    rowList[index].named[property.name] = value
                } else if let column = column(of: property.name, at: position, table: tableNumber) {
                    let index = row ?? startRow(key, table: tableNumber, insertsBareRow: false)
                    row = index
                    cells[rowList[index].base + column] = value
                }
            }
        }
    }

    /// The column of property `name`, found at `position` of a record's properties.
    @inline(__always)
    private mutating func column(of name: String, at position: Int, table: Int) -> Int? {
        if position < tables[table].propertyNames.count, tables[table].propertyNames[position] == name {
            let column = tables[table].propertyColumns[position]
            return column < 0 ? nil : column
        }
        let column = tables[table].columnIndex[name]
        if position >= tables[table].propertyNames.count {
            tables[table].propertyNames += Array(repeating: "", count: position + 1 - tables[table].propertyNames.count)
            tables[table].propertyColumns += Array(repeating: -1, count: position + 1 - tables[table].propertyColumns.count)
        }
        tables[table].propertyNames[position] = name
        tables[table].propertyColumns[position] = column ?? -1
        return column
    }

    private mutating func setLink(_ link: (table: String, isSource: Bool), object: Int64, other: Int64, present: Bool) {
        let key = LinkKey(table: link.table, source: link.isSource ? object : other, destination: link.isSource ? other : object)
        if links[key] == nil { linkOrder.append(key) }
        links[key] = present
    }

    private mutating func makeStatements(schema: PostgresMirrorSchema) throws {
        for table in deleteOrder {
            var binds = PostgresBindings()
            binds.append(deletes[table]!)
            let pk = PostgresMirrorSchema.quote(schema.keyColumn(ofTable: table))
            statements.append(PostgresQuery(unsafeSQL: "DELETE FROM \(schema.qualified(table)) WHERE \(pk) = ANY($1)", binds: binds))
        }
        for join in schema.joinTables {
            for (column, entity) in [("src", join.sourceEntity), ("dst", join.destinationEntity)] {
                guard let keys = deletedObjects[entity] else { continue }
                var binds = PostgresBindings()
                binds.append(keys)
                statements.append(PostgresQuery(unsafeSQL: "DELETE FROM \(schema.qualified(join.name)) WHERE \"\(column)\" = ANY($1)", binds: binds))
            }
        }
        let liveLinks = linkOrder.filter { links[$0] != nil }
        var removals: [String: [LinkKey]] = [:], additions: [String: [LinkKey]] = [:]
        for link in liveLinks {
            if links[link] == true { additions[link.table, default: []].append(link) } else { removals[link.table, default: []].append(link) }
        }
        for (table, keys) in removals.sorted(by: { $0.key < $1.key }) {
            var binds = PostgresBindings()
            binds.append(keys.map(\.source))
            binds.append(keys.map(\.destination))
            statements.append(PostgresQuery(unsafeSQL: "DELETE FROM \(schema.qualified(table)) WHERE (\"src\", \"dst\") IN (SELECT * FROM unnest($1::bigint[], $2::bigint[]))", binds: binds))
        }
        // Upserts, grouped by table and the columns they set.
        struct Group: Hashable {
            var table: Int
            /// The columns set, as bits when the table has at most 64 (no array per row) ...
            var mask: UInt64
            /// ... else as positions.
            var wide: [Int]
            var names: [String]

            var columns: [Int] { wide.isEmpty && mask != 0 ? (0..<64).filter { mask & (1 << UInt64($0)) != 0 } : wide }
        }
        var groups: [Group: [Int]] = [:]
        var groupOrder: [Group] = []
        for (index, row) in rowList.enumerated() where row.live {
            let group: Group
            if tables[row.table].table.takesAnyColumn {
                if row.named.isEmpty && !row.insertsBareRow { continue }
                group = Group(table: row.table, mask: 0, wide: [], names: row.named.keys.sorted())
            } else if row.width <= 64 {
                var mask: UInt64 = 0
                for column in 0..<row.width where cells[row.base + column] != nil { mask |= 1 << UInt64(column) }
                if mask == 0 && !row.insertsBareRow { continue }
                group = Group(table: row.table, mask: mask, wide: [], names: [])
            } else {
                let columns = (0..<row.width).filter { cells[row.base + $0] != nil }
                if columns.isEmpty && !row.insertsBareRow { continue }
                group = Group(table: row.table, mask: 0, wide: columns, names: [])
            }
            groups[group, default: []].append(index)
            if groups[group]!.count == 1 { groupOrder.append(group) }
        }
        for group in groupOrder {
            let groupColumns = group.columns
            let table = tables[group.table].table
            let names = table.takesAnyColumn ? group.names : groupColumns.map { table.columns[$0].name }
            let members = groups[group]!
            // A row's value of the group's `n`th column.
            func value(_ row: Row, _ n: Int) -> AttributeValue {
                table.takesAnyColumn ? row.named[names[n]]! : cells[row.base + groupColumns[n]]!
            }
            let conflict = " ON CONFLICT (\(PostgresMirrorSchema.quote(table.keyColumn))) DO " + (names.isEmpty ? "NOTHING"
                : "UPDATE SET " + names.map { "\(PostgresMirrorSchema.quote($0)) = EXCLUDED.\(PostgresMirrorSchema.quote($0))" }.joined(separator: ", "))
            let columnList = ([table.keyColumn] + names).map(PostgresMirrorSchema.quote).joined(separator: ", ")
            if !table.takesAnyColumn, let arrays = Self.columnArrays(members, of: rowList, cells: cells, table: table, columns: groupColumns) {
                // One array per column: a short statement, whatever the batch's size.
                var binds = PostgresBindings(capacity: arrays.count)
                for array in arrays { try binds.append(array) }
                let parameters = (1...arrays.count).map { "$\($0)" }.joined(separator: ", ")
                statements.append(PostgresQuery(unsafeSQL: "INSERT INTO \(schema.qualified(table.name)) (\(columnList)) SELECT * FROM unnest(\(parameters))" + conflict, binds: binds))
                continue
            }
            let perStatement = max(1, Self.maximumParameters / (names.count + 1))
            var start = 0
            while start < members.count {
                let slice = members[start..<min(members.count, start + perStatement)]
                start += slice.count
                var binds = PostgresBindings(capacity: slice.count * (names.count + 1))
                var sql = "INSERT INTO \(schema.qualified(table.name)) (\(columnList)) VALUES "
                var parameter = 0
                for (offset, member) in slice.enumerated() {
                    let row = rowList[member]
                    sql += offset == 0 ? "(" : ", ("
                    parameter += 1
                    sql += "$\(parameter)"
                    binds.append(row.key.key)
                    for n in names.indices {
                        parameter += 1
                        sql += ", $\(parameter)"
                        try Self.bind(value(row, n), into: &binds)
                    }
                    sql += ")"
                }
                statements.append(PostgresQuery(unsafeSQL: sql + conflict, binds: binds))
            }
        }
        for (table, keys) in additions.sorted(by: { $0.key < $1.key }) {
            var binds = PostgresBindings()
            binds.append(keys.map(\.source))
            binds.append(keys.map(\.destination))
            statements.append(PostgresQuery(unsafeSQL: "INSERT INTO \(schema.qualified(table)) (\"src\", \"dst\") SELECT * FROM unnest($1::bigint[], $2::bigint[]) ON CONFLICT DO NOTHING",
                                            binds: binds))
        }
    }

    /// The group's columns (positions in `table`) as typed arrays, keys first, or nil when a
    /// value's kind does not fit its column's type (the group then binds its values one by one).
    private static func columnArrays(_ members: [Int], of rows: [Row], cells: [AttributeValue?], table: PostgresMirrorSchema.Table, columns: [Int]) -> [PostgresColumnArray]? {
        var keyArray = PostgresColumnArray(columnType: "bigint")!
        for member in members { _ = keyArray.append(.integer(rows[member].key.key)) }
        var arrays = [keyArray]
        for column in columns {
            guard var array = PostgresColumnArray(columnType: table.columns[column].type) else { return nil }
            for member in members {
                guard array.append(cells[rows[member].base + column]!) else { return nil }
            }
            arrays.append(array)
        }
        return arrays
    }

    /// Binds one value: its PostgreSQL type follows its kind; an object ID binds its primary key.
    static func bind(_ value: AttributeValue, into binds: inout PostgresBindings) throws {
        switch value {
        case .null: binds.appendNull()
        case .string(let text): binds.append(text)
        case .integer(let number): binds.append(number)
        case .double(let number): binds.append(number)
        case .bool(let flag): binds.append(flag)
        case .date(let date): binds.append(date)
        case .uuid(let uuid): binds.append(uuid)
        case .data(let data): try binds.append(data)
        case .objectID(let object): binds.append(object.primaryKey)
        case .array(let items): binds.append(items.map(\.description))
        }
    }
}
