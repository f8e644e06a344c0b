import Foundation

/// A table's unique indexes as SQLite enforces them, for the replace probe of
/// ``CaptureTriggers``: an `INSERT OR REPLACE` that conflicts on any of them deletes the
/// row in the way, whether the index is on plain columns, on a column with another
/// collation (`email COLLATE NOCASE`) or on an expression (`lower(label)`).
///
/// Each index is a list of terms. A term is a column's name when the index compares the
/// column as stored (`BINARY`); otherwise it is SQL over the table's columns
/// (`"email" COLLATE NOCASE`, `lower(label)`), which the probe evaluates for the new row too.
/// A partial index (`… WHERE active = 1`) has its condition as a last term, `(active = 1)`
/// (a line break before the parenthesis ends a `--` comment the statement ends with): two
/// rows conflict on it only where both meet it, and an update of a column the condition
/// reads (setting `active`, or the key) can bring a row into the index and so remove another.
enum UniqueIndexes {
    /// The unique indexes of `table` (its `INTEGER PRIMARY KEY` is not an index), in name
    /// order. An index on an expression that reads more than `columns` (a generated column)
    /// is left out: the new row's value of it is not known before the insert.
    static func terms(of table: String, columns: [String], on db: Connection) throws -> [[String]] {
        let list = try db.makeStatement("SELECT name, sql FROM pragma_index_list(?, 'main') JOIN sqlite_master USING (name) WHERE \"unique\" = 1 ORDER BY name")
        try list.bind([.string(table)])
        var indexes: [(String, String?)] = []
        while try list.step() { indexes.append((list.string(at: 0), list.optionalString(at: 1))) }
        let row = columns.map { "NULL AS \(quote($0))" }.joined(separator: ", ")
        let readable = { (term: String) in columns.contains(term) || (try? db.makeStatement("SELECT \(term) FROM (SELECT \(row))")) != nil }
        return try indexes.compactMap { index in
            let terms = try terms(ofIndex: index.0, sql: index.1, on: db)
            guard terms.allSatisfy(readable) else { return nil }
            // A condition the probe cannot evaluate (it reads a generated column) is left out:
            // the probe then looks at more rows than conflict, and the fold keeps only those gone.
            guard let condition = index.1.flatMap(partialCondition).map({ "(\($0)\n)" }), readable(condition) else { return terms }
            return terms + [condition]
        }
    }

    private static func terms(ofIndex index: String, sql: String?, on db: Connection) throws -> [String] {
        let info = try db.makeStatement("SELECT cid, name, coll FROM pragma_index_xinfo(?, 'main') WHERE key = 1 ORDER BY seqno")
        try info.bind([.string(index)])
        var terms: [String] = []
        var written: [String]?
        while try info.step() {
            let column = info.int64(at: 0)
            if column >= 0 {
                let (name, collation) = (info.string(at: 1), info.string(at: 2))
                terms.append(collation.uppercased() == "BINARY" ? name : "\(quote(name)) COLLATE \(collation)")
            } else {
                // An expression: its text is only in the index's CREATE statement.
                written = written ?? sql.map(Self.keyTerms) ?? []
                terms.append(terms.count < written!.count ? written![terms.count] : "NULL")
            }
        }
        return terms
    }

    /// The terms of a `CREATE [UNIQUE] INDEX … ON table (term, …) [WHERE …]` statement, each
    /// without its `ASC`/`DESC`.
    static func keyTerms(_ sql: String) -> [String] { termList(sql)?.terms ?? [] }

    /// The condition of a partial index's `CREATE` statement (what follows `WHERE`), else nil.
    static func partialCondition(_ sql: String) -> String? {
        guard let rest = termList(sql)?.rest.trimmingCharacters(in: .whitespacesAndNewlines),
              let range = rest.range(of: #"^WHERE\b"#, options: [.regularExpression, .caseInsensitive]) else { return nil }
        let condition = rest[range.upperBound...].trimmingCharacters(in: .whitespacesAndNewlines)
        return condition.isEmpty ? nil : condition
    }

    /// The terms of the statement's parenthesised list, and the text after it.
    private static func termList(_ sql: String) -> (terms: [String], rest: String)? {
        let text = Array(sql)
        guard let open = firstParenthesis(text) else { return nil }
        var terms: [String] = [], current = "", depth = 0, quote: Character?
        for (offset, character) in text[(open + 1)...].enumerated() {
            if let q = quote {
                current.append(character)
                if character == q || (q == "[" && character == "]") { quote = nil }
                continue
            }
            switch character {
            case "'", "\"", "`", "[":
                quote = character
                current.append(character)
            case "(":
                depth += 1
                current.append(character)
            case ")" where depth == 0:
                terms.append(current)
                return (terms.map(trimmingOrder), String(text[(open + 2 + offset)...]))
            case ")":
                depth -= 1
                current.append(character)
            case "," where depth == 0:
                terms.append(current)
                current = ""
            default:
                current.append(character)
            }
        }
        return nil
    }

    /// The first `(` outside quotes (an index or table name may hold one).
    private static func firstParenthesis(_ text: [Character]) -> Int? {
        var quote: Character?
        for (i, character) in text.enumerated() {
            if let q = quote {
                if character == q || (q == "[" && character == "]") { quote = nil }
            } else if "'\"`[".contains(character) {
                quote = character
            } else if character == "(" {
                return i
            }
        }
        return nil
    }

    private static func trimmingOrder(_ term: String) -> String {
        let trimmed = term.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let range = trimmed.range(of: #"\s+(ASC|DESC)$"#, options: [.regularExpression, .caseInsensitive]) else { return trimmed }
        return String(trimmed[..<range.lowerBound])
    }
}
