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

    /// A format string that parses back to an equal predicate.
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

    static func format(_ expression: PredicateExpression) -> String {
        switch expression {
        case .keyPath(let path): return path.joined(separator: ".")
        case .aggregate(let items): return "{" + items.map(format).joined(separator: ", ") + "}"
        case .constant(let value): return format(value)
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
        case .double(let d): return String(d)
        case .bool(let b): return b ? "TRUE" : "FALSE"
        case .date(let d): return "CAST(\(String(d.timeIntervalSince1970)), \"NSDate\")"
        case .uuid(let u): return "UUID(\(quoted(u.uuidString)))"
        case .data(let d): return "DATA(\(quoted(d.base64EncodedString())))"
        case .objectID(let id): return "OBJECTID(\(quoted(id.uriRepresentation)))"
        case .array(let items): return "{" + items.map(format).joined(separator: ", ") + "}"
        }
    }
}
