import Foundation

extension StorePredicate {
    /// Parses an NSPredicate-style format string; `%@`, `%K`, `%d` and `%f`
    /// take the arguments in order. Errors name the offending token and its offset.
    ///
    /// ```swift
    /// let p = try StorePredicate(format: "title BEGINSWITH[c] %@ AND createdAt > %@", "swift", .date(cutoff))
    /// let q = try StorePredicate(format: "%K IN {'a', 'b'}", "name")
    /// ```
    public init(format: String, _ arguments: AttributeValue...) throws {
        try self.init(format: format, argumentArray: arguments)
    }

    /// Parses a format string with its arguments as an array.
    ///
    /// ```swift
    /// let p = try StorePredicate(format: "externalID IN %@", argumentArray: [.array(["a", "b"])])
    /// ```
    public init(format: String, argumentArray: [AttributeValue]) throws {
        var parser = try PredicateFormatParser(format: format, arguments: argumentArray)
        self = try parser.parse()
    }

    /// A format string that parses back to an equal predicate. Values with no
    /// literal print as `CAST(seconds since 2001-01-01, "NSDate")` (Apple's epoch, as NSPredicate prints dates), `UUID("…")`,
    /// `OBJECTID("…")`, `DATA("base64")` and `ARRAY(…)` (an array argument, as
    /// opposed to a `{…}` list), and a key path spelled like a keyword as `#in`.
    ///
    /// ```swift
    /// let text = predicate.predicateFormat      // "title BEGINSWITH[c] \"swift\""
    /// ```
    public var predicateFormat: String {
        switch self {
        case .constant(let value): return value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .not(let inner): return "NOT (\(inner.predicateFormat))"
        case .and(let parts): return parts.map { "(\($0.predicateFormat))" }.joined(separator: " AND ")
        case .or(let parts): return parts.map { "(\($0.predicateFormat))" }.joined(separator: " OR ")
        case .comparison(let c):
            var text = c.modifier == .direct ? "" : c.modifier.rawValue + " "
            text += Self.format(c.left) + " " + c.op.rawValue
            if !c.options.isEmpty {
                text += "[" + (c.options.contains(.caseInsensitive) ? "c" : "") + (c.options.contains(.diacriticInsensitive) ? "d" : "") + "]"
            }
            return text + " " + Self.format(c.right)
        }
    }

    static func format(_ expression: StorePredicateExpression) -> String {
        switch expression {
        case .keyPath(let path):
            // A one-part key path spelled like a reserved word needs the # escape.
            if path.count == 1, reservedWords.contains(path[0].uppercased()) { return "#" + path[0] }
            // A name another program gave that is not a plain word goes in backticks.
            return path.map { ManagedObjectModel.needsQuoting($0) ? "`\($0)`" : $0 }.joined(separator: ".")
        case .aggregate(let items): return "{" + items.map(format).joined(separator: ", ") + "}"
        case .constant(let value): return format(value)
        case .subqueryCount(let subquery):
            return "SUBQUERY(\(format(.keyPath(subquery.collection))), $\(subquery.variable), \(subquery.predicate.predicateFormat)).@count"
        }
    }

    static func format(_ value: AttributeValue) -> String {
        func quoted(_ s: String) -> String {
            "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n") + "\""
        }
        switch value {
        case .null: return "NIL"
        case .string(let s): return quoted(s)
        case .integer(let i): return String(i)
        case .double(let d): return d.isInfinite ? (d < 0 ? "-1e999" : "1e999") : String(d)
        case .bool(let b): return b ? "TRUE" : "FALSE"
        case .date(let d): return "CAST(\(String(d.timeIntervalSinceReferenceDate)), \"NSDate\")"
        case .uuid(let u): return "UUID(\(quoted(u.uuidString)))"
        case .data(let d): return "DATA(\(quoted(d.base64EncodedString())))"
        case .objectID(let id): return "OBJECTID(\(quoted(id.uriRepresentation)))"
        case .array(let items): return "ARRAY(" + items.map(format).joined(separator: ", ") + ")"
        }
    }

    /// Words the parser reads as keywords where a key path could stand.
    private static let reservedWords: Set<String> = [
        "AND", "OR", "NOT", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "MATCHES", "IN", "BETWEEN", "ANY", "SOME", "ALL", "NONE",
        "TRUE", "FALSE", "YES", "NO", "NIL", "NULL", "TRUEPREDICATE", "FALSEPREDICATE",
    ]
}
