import Foundation

/// An aggregate over the rows of a dictionary fetch (of each group, with
/// ``FetchRequest/propertiesToGroupBy``), named in ``FetchRequest/propertiesToFetch``,
/// ``FetchRequest/havingPredicate`` or a sort descriptor by a string in either of two
/// spellings: a collection operator (`@count`, `@sum.magnitude`, `@avg.magnitude`,
/// `@min.time`, `@max.time`) or the function form of Core Data's expression descriptions
/// (`count:(code)`, `sum:(magnitude)`, `average:(magnitude)`, `min:(time)`, `max:(time)`).
///
/// Results are typed as Core Data types them: counts are integers, `sum` of an integer
/// attribute an integer and of a double a double (0 over no rows), `average` a double
/// (nil over no rows), `min` and `max` the attribute's own type (nil over no rows).
struct FetchExpression: Equatable {
    enum Function: String {
        case count, sum, average, min, max
    }

    let function: Function
    /// The key path aggregated; nil for `@count`, which counts rows.
    let keyPath: [String]?

    /// The aggregate `text` spells, or nil when it is not one (a property or key path).
    init?(_ text: String) {
        if text.hasPrefix("@") {
            let parts = text.dropFirst().split(separator: ".", maxSplits: 1).map(String.init)
            guard let name = parts.first, let function = Self.operators[name] else { return nil }
            if parts.count == 1 {
                guard function == .count else { return nil }
                self.init(function: .count, keyPath: nil)
                return
            }
            self.init(function: function, keyPath: parts[1].split(separator: ".").map(String.init))
            return
        }
        guard text.hasSuffix(")"), let colon = text.range(of: ":("),
              let function = Function(rawValue: String(text[..<colon.lowerBound])) else { return nil }
        let argument = text[colon.upperBound..<text.index(before: text.endIndex)].trimmingCharacters(in: .whitespaces)
        guard !argument.isEmpty else { return nil }
        self.init(function: function, keyPath: argument.split(separator: ".").map(String.init))
    }

    init(function: Function, keyPath: [String]?) {
        self.function = function
        self.keyPath = keyPath
    }

    private static let operators: [String: Function] = ["count": .count, "sum": .sum, "avg": .average, "min": .min, "max": .max]
}

extension PredicateCompiler {
    /// The SQL aggregate of `expression` over the rows of `table` aliased `alias` (in a
    /// grouped or aggregate SELECT), typed as Core Data types it.
    mutating func aggregate(_ expression: FetchExpression, written: String, table: StoreSchema.Table, alias: String) throws -> Scalar {
        guard let keyPath = expression.keyPath else { return Scalar(sql: "count(*)", kind: .attribute(.integer)) }
        let value = try resolve(keyPath, table: table, alias: alias)
        let number: AttributeType?
        if case .attribute(let type) = value.kind, [.integer, .double, .bool].contains(type) { number = type } else { number = nil }
        func numeric() throws -> AttributeType {
            guard let number else {
                throw TributaryError(.invalidInput, "'\(written)' adds up values, and '\(keyPath.joined(separator: "."))' is not a number", location: "key path '\(written)'",
                                     hint: "aggregate an integer or double attribute, or use count:, min: or max:")
            }
            return number
        }
        switch expression.function {
        case .count:
            return Scalar(sql: "count(\(value.sql))", kind: .attribute(.integer), arguments: value.arguments)
        case .sum:
            if try numeric() == .double { return Scalar(sql: "total(\(value.sql))", kind: .attribute(.double), arguments: value.arguments) }
            return Scalar(sql: "coalesce(sum(\(value.sql)), 0)", kind: .attribute(.integer), arguments: value.arguments)
        case .average:
            _ = try numeric()
            return Scalar(sql: "avg(\(value.sql))", kind: .attribute(.double), arguments: value.arguments)
        case .min, .max:
            return Scalar(sql: "\(expression.function.rawValue)(\(value.sql))", kind: value.kind, arguments: value.arguments)
        }
    }
}
