import Foundation

/// Reads an existing database's tables as entities: the first step of adopting it.
///
/// Each table becomes an entity of its name; each column an attribute by its declared
/// type's affinity (values stay as stored: a date kept as text stays a string); the
/// `INTEGER PRIMARY KEY` identifies rows, or the rowid when there is none; unique indexes
/// become uniqueness constraints; foreign keys to another adopted table's key become to-one
/// relationships (``ForeignKeyInference``). Tables Tributary cannot capture are refused, all at once,
/// each with its reason, as are tables whose inferred entities the model would refuse
/// (``InferredModelCheck``).
struct SchemaInference {
    let options: DatabaseAdoption

    struct Result {
        var entities: [EntityDescription]
        var tables: [AdoptionReport.Table]
        var skipped: [String: String]
    }

    func read(on db: Connection, place: String) throws -> Result {
        var result = Result(entities: [], tables: [], skipped: [:])
        var refused: [(table: String, why: String)] = []
        let list = try db.makeStatement("SELECT name, type, wr, strict FROM pragma_table_list WHERE schema = 'main' ORDER BY name")
        var candidates: [Candidate] = []
        while try list.step() { candidates.append(Candidate(name: list.string(at: 0), type: list.string(at: 1), withoutRowid: list.int64(at: 2) != 0, strict: list.int64(at: 3) != 0)) }
        var names: [String: String] = [:]
        for table in candidates {
            if let why = try take(table, into: &result, on: db) { refused.append((table.name, why)); continue }
            // SQLite folds the case of ASCII letters only: `Ä` and `ä` are two tables to it.
            guard result.entities.last?.name == table.name else { continue }
            if let other = names[table.name.lowercased()] {
                result.entities.removeLast()
                result.tables.removeLast()
                refused.append((table.name, "'\(table.name)' differs from '\(other)' only in case, which Tributary's names cannot tell apart"))
            } else {
                names[table.name.lowercased()] = table.name
            }
        }
        if !result.entities.isEmpty {
            var foreignKeys = ForeignKeyInference(entities: result.entities, tables: result.tables)
            try foreignKeys.link(on: db)
            (result.entities, result.tables) = (foreignKeys.entities, foreignKeys.tables)
            refused += try InferredModelCheck.problems(of: result.entities)
        }
        if !refused.isEmpty { throw Self.refusal(refused, place: place) }
        guard !result.entities.isEmpty else {
            throw TributaryError(.invalidInput, "no table to adopt", location: place, hint: "the database has no ordinary tables, or --include/--exclude left none")
        }
        return result
    }

    /// Adds the table to `result` as an entity, or to its skipped tables; or says why it is refused.
    /// A table as `pragma_table_list` lists it.
    private struct Candidate {
        let name: String
        let type: String
        let withoutRowid: Bool
        let strict: Bool
    }

    private func take(_ table: Candidate, into result: inout Result, on db: Connection) throws -> String? {
        let lower = table.name.lowercased()
        if lower.hasPrefix("sqlite_") || lower.hasPrefix("_tributary_") { return nil }
        switch table.type {
        case "view": return nil
        case "shadow": result.skipped[table.name] = "a virtual table's storage"; return nil
        case "virtual": result.skipped[table.name] = "a virtual table (SQLite runs no triggers on it)"; return nil
        default: break
        }
        guard options.adopts(table.name) else { result.skipped[table.name] = "excluded"; return nil }
        if let problem = ManagedObjectModel.adoptionProblem(ofName: table.name) { return "'\(table.name)' \(problem)" }
        do {
            let (entity, report) = try self.entity(table, on: db)
            result.entities.append(entity)
            result.tables.append(report)
            return nil
        } catch let problem as Refusal {
            return problem.text
        }
    }

    /// The error refusing `refused` tables, each with its reason, with the `--exclude` options that leave them out.
    private static func refusal(_ refused: [(table: String, why: String)], place: String) -> TributaryError {
        let names = refused.map(\.table).map { ManagedObjectModel.isValidName($0) ? $0 : "'\($0.replacingOccurrences(of: "'", with: "'\\''"))'" }
        return TributaryError(.invalidInput, "cannot adopt \(refused.count == 1 ? "a table" : "\(refused.count) tables"): \(refused.map(\.why).joined(separator: "; "))", location: place,
                              hint: "leave \(names.count == 1 ? "it" : "them") out with " + names.map { "--exclude \($0)" }.joined(separator: " "))
    }

    /// Why one table cannot be adopted.
    private struct Refusal: Error { let text: String }

    private struct Column {
        let name: String
        let declared: String
        let notNull: Bool
        let defaultSQL: String?
        let primaryKey: Int
        let hidden: Int
    }

    private func entity(_ table: Candidate, on db: Connection) throws -> (EntityDescription, AdoptionReport.Table) {
        let (name, withoutRowid) = (table.name, table.withoutRowid)
        let columns = try self.columns(of: name, strict: table.strict, on: db)
        var notes: [String] = []
        let key = try self.key(of: name, columns: columns, withoutRowid: withoutRowid, notes: &notes, on: db)
        var entity = EntityDescription(name: name)
        entity.tableKey = key
        entity.isWithoutRowid = withoutRowid
        // A key that is not the object's key is kept as attributes, and named in every change.
        entity.declaredKey = columns.filter { $0.primaryKey > 0 && $0.name != key }.sorted { $0.primaryKey < $1.primaryKey }.map(\.name)
        for column in columns where column.name != key {
            guard column.hidden == 0 else {
                notes.append("generated column \(column.name) is left out (SQLite computes it)")
                continue
            }
            if let problem = ManagedObjectModel.adoptionProblem(ofName: column.name) {
                throw Refusal(text: "'\(name)' has column '\(column.name)', which \(problem)")
            }
            entity.attributes.append(attribute(column, notes: &notes))
        }
        guard entity.attributes.count <= ManagedObjectModel.maximumColumns else {
            throw Refusal(text: "'\(name)' has \(entity.attributes.count) columns, more than \(ManagedObjectModel.maximumColumns)")
        }
        entity.uniquenessConstraints = try uniqueConstraints(of: name, attributes: Set(entity.attributes.map(\.name)), on: db)
        return (entity, AdoptionReport.Table(name: name, key: key, attributes: entity.attributes.map(\.name), relationships: [], notes: notes))
    }

    /// The table's columns. A `STRICT` table's `ANY` column keeps every value as given, as an
    /// untyped column does (elsewhere `ANY` is of NUMERIC affinity): it is adopted as one.
    private func columns(of table: String, strict: Bool, on db: Connection) throws -> [Column] {
        let statement = try db.makeStatement("SELECT name, type, \"notnull\", dflt_value, pk, hidden FROM pragma_table_xinfo(?, 'main') ORDER BY cid")
        try statement.bind([.string(table)])
        var columns: [Column] = []
        while try statement.step() {
            let declared = statement.string(at: 1)
            columns.append(Column(name: statement.string(at: 0), declared: strict && declared.uppercased() == "ANY" ? "" : declared, notNull: statement.int64(at: 2) != 0,
                                  defaultSQL: statement.optionalString(at: 3), primaryKey: Int(statement.int64(at: 4)), hidden: Int(statement.int64(at: 5))))
        }
        return columns
    }

    /// The `INTEGER PRIMARY KEY` column (an alias of the rowid), or the rowid's name (for a
    /// `WITHOUT ROWID` table, the name its ``KeyMap``'s numbers go by).
    private func key(of table: String, columns: [Column], withoutRowid: Bool, notes: inout [String], on db: Connection) throws -> String {
        let declared = columns.filter { $0.primaryKey > 0 }.sorted { $0.primaryKey < $1.primaryKey }
        let hasKeyIndex = try db.scalar("SELECT count(*) FROM pragma_index_list(?, 'main') WHERE origin = 'pk'", [.string(table)])?.integerValue ?? 0 > 0
        if declared.count == 1, declared[0].declared.uppercased() == "INTEGER", !hasKeyIndex { return declared[0].name }
        let names = Set(columns.map { $0.name.lowercased() })
        guard let rowid = RowidName.all.first(where: { !names.contains($0) }) else {
            throw Refusal(text: "'\(table)' has no INTEGER PRIMARY KEY and columns named rowid, _rowid_ and oid hide its rowid")
        }
        let keyNames = declared.map(\.name).joined(separator: ", ")
        if withoutRowid {
            notes.append("a WITHOUT ROWID table: its rows are numbered in \(KeyMap.prefix)\(table), numbers that VACUUM keeps and that follow a row whose key (\(keyNames)) changes; "
                         + "every change names its row by \(keyNames) too; Tributary records every program's writes to it and writes it through its capture triggers")
            return rowid
        }
        let declaredKey = declared.isEmpty ? "no declared key" : "its key (\(keyNames)) is not an INTEGER PRIMARY KEY"
        let named = declared.isEmpty ? "" : " (every change names its row by \(keyNames) too)"
        notes.append("\(declaredKey): rows are identified by their rowid, which VACUUM may renumber, changing their object IDs\(named); declare an INTEGER PRIMARY KEY to keep them")
        return rowid
    }

    /// An attribute by the affinity of the declared type (``type(declared:)``).
    private func attribute(_ column: Column, notes: inout [String]) -> AttributeDescription {
        let type = Self.type(declared: column.declared)
        var defaultValue: AttributeValue?
        if let sql = column.defaultSQL {
            defaultValue = Self.literal(sql)?.coerced(to: type)
            if defaultValue == nil { notes.append("the default of \(column.name) (\(sql)) is not a constant: other programs' inserts get it, Tributary's leave the column NULL unless given") }
        }
        return AttributeDescription(name: column.name, type: type, isOptional: !column.notNull, defaultValue: defaultValue)
    }

    /// The attribute type of a column declared `declared`: its affinity (SQLite's rules,
    /// section 3.1 of its datatype page), with NUMERIC split into bool, date-like text and
    /// double, and an untyped column a string.
    static func type(declared: String) -> AttributeType {
        switch ColumnAffinity(declared: declared) {
        case .integer: return .integer
        case .text: return .string
        case .blob: return declared.isEmpty ? .string : .binary
        case .real: return .double
        case .numeric:
            let declared = declared.uppercased()
            if declared.contains("BOOL") { return .bool }
            if declared.contains("DATE") || declared.contains("TIME") { return .string }
            return .double
        }
    }

    /// Whether a column declared `declared` keeps the integers it is given as integers: one
    /// of INTEGER affinity, or untyped (a bare `owner_id REFERENCES users`), whose values
    /// stay as given. (Its rows may still hold other values; adoption looks.)
    static func holdsIntegers(declared: String) -> Bool {
        declared.isEmpty || type(declared: declared) == .integer
    }

    /// A default written as a literal: a number, a quoted string, NULL, TRUE or FALSE.
    static func literal(_ sql: String) -> AttributeValue? {
        let text = sql.trimmingCharacters(in: .whitespaces)
        switch text.uppercased() {
        case "NULL": return nil
        case "TRUE": return .integer(1)
        case "FALSE": return .integer(0)
        default: break
        }
        if let integer = Int64(text) { return .integer(integer) }
        if let double = Double(text), double.isFinite { return .double(double) }
        if text.count >= 2, text.hasPrefix("'"), text.hasSuffix("'") {
            return .string(String(text.dropFirst().dropLast()).replacingOccurrences(of: "''", with: "'"))
        }
        return nil
    }

    /// Unique indexes over plain columns (not partial, no expressions) as constraints.
    private func uniqueConstraints(of table: String, attributes: Set<String>, on db: Connection) throws -> [[String]] {
        let indexes = try db.makeStatement("SELECT name FROM pragma_index_list(?, 'main') WHERE \"unique\" = 1 AND partial = 0 ORDER BY name")
        try indexes.bind([.string(table)])
        var names: [String] = []
        while try indexes.step() { names.append(indexes.string(at: 0)) }
        var constraints: [[String]] = []
        for index in names {
            let info = try db.makeStatement("SELECT cid, name FROM pragma_index_info(?, 'main') ORDER BY seqno")
            try info.bind([.string(index)])
            var columns: [String] = []
            var plain = true
            while try info.step() {
                if info.int64(at: 0) < 0 || info.isNull(at: 1) { plain = false } else { columns.append(info.string(at: 1)) }
            }
            if plain, !columns.isEmpty, columns.allSatisfy(attributes.contains), !constraints.contains(columns) { constraints.append(columns) }
        }
        return constraints
    }
}
