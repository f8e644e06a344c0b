import Foundation

extension StorePredicate {
    /// Evaluates the predicate in memory over one object's values (a change record's, say),
    /// without SQL. Supports the common operators: `==`, `!=`, `<`, `<=`, `>`, `>=`,
    /// `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `MATCHES`, `IN`, `BETWEEN`, `AND`, `OR`, `NOT`, and the
    /// `[c]` and `[d]` options, on single-name key paths. A missing value is `nil`.
    /// `LIKE`, `ANY`/`ALL`/`NONE`, `SUBQUERY` and dotted key paths throw `invalidPredicate`; call
    /// ``checkEvaluable()`` to find out before there are values.
    ///
    /// ```swift
    /// let p = try StorePredicate(format: "title BEGINSWITH[c] 'swift' AND views > 10")
    /// try p.evaluate(["title": .string("Swift on Linux"), "views": .integer(12)])   // true
    /// ```
    public func evaluate(_ values: [String: AttributeValue]) throws -> Bool {
        switch self {
        case .constant(let value): return value
        case .not(let inner): return try !inner.evaluate(values)
        case .and(let parts):
            for part in parts where try !part.evaluate(values) { return false }
            return true
        case .or(let parts):
            for part in parts where try part.evaluate(values) { return true }
            return false
        case .comparison(let comparison): return try comparison.evaluate(values)
        }
    }

    /// Throws `invalidPredicate` naming the first part ``evaluate(_:)`` does not support.
    ///
    /// ```swift
    /// try StorePredicate(format: "ANY tags.name == 'x'").checkEvaluable()   // throws
    /// ```
    public func checkEvaluable() throws {
        switch self {
        case .constant: return
        case .not(let inner): try inner.checkEvaluable()
        case .and(let parts), .or(let parts): for part in parts { try part.checkEvaluable() }
        case .comparison(let comparison): try comparison.checkEvaluable()
        }
    }
}

extension Comparison {
    private func unsupported(_ what: String) -> TributaryError {
        TributaryError(.invalidPredicate, "\(what) cannot be evaluated on a record's values", location: StorePredicate.comparison(self).predicateFormat,
                       hint: "use ==, !=, <, <=, >, >=, BEGINSWITH, ENDSWITH, CONTAINS, IN, BETWEEN, AND, OR, NOT on attribute names")
    }

    func checkEvaluable() throws {
        guard modifier == .direct else { throw unsupported(modifier.rawValue) }
        guard op != .like else { throw unsupported("LIKE") }
        for side in [left, right] {
            if case .keyPath(let path) = side, path.count != 1 { throw unsupported("the key path '\(path.joined(separator: "."))'") }
            if case .subqueryCount = side { throw unsupported("SUBQUERY") }
            if case .aggregate(let items) = side {
                for item in items { if case .constant = item {} else { throw unsupported("a list of non-constants") } }
            }
        }
    }

    func evaluate(_ values: [String: AttributeValue]) throws -> Bool {
        try checkEvaluable()
        let lhs = resolve(left, values)
        let rhs = resolve(right, values)
        switch op {
        case .equal: return Self.equal(lhs, rhs, options)
        case .notEqual: return !Self.equal(lhs, rhs, options)
        case .less: return Self.order(lhs, rhs, options).map { $0 < 0 } ?? false
        case .lessOrEqual: return Self.order(lhs, rhs, options).map { $0 <= 0 } ?? false
        case .greater: return Self.order(lhs, rhs, options).map { $0 > 0 } ?? false
        case .greaterOrEqual: return Self.order(lhs, rhs, options).map { $0 >= 0 } ?? false
        case .beginsWith, .endsWith, .contains:
            if case .array(let items) = lhs, op == .contains { return items.contains { Self.equal($0, rhs, options) } }
            guard let a = lhs.stringValue, let b = rhs.stringValue else { return false }
            let x = Self.fold(a, options), y = Self.fold(b, options)
            return op == .beginsWith ? x.hasPrefix(y) : op == .endsWith ? x.hasSuffix(y) : x.contains(y)
        case .in:
            if case .array(let items) = rhs { return items.contains { Self.equal(lhs, $0, options) } }
            if let a = lhs.stringValue, let b = rhs.stringValue { return Self.fold(b, options).contains(Self.fold(a, options)) }
            return false
        case .between:
            guard case .array(let bounds) = rhs, bounds.count == 2 else { throw unsupported("BETWEEN without two bounds") }
            guard let low = Self.order(lhs, bounds[0], options), let high = Self.order(lhs, bounds[1], options) else { return false }
            return low >= 0 && high <= 0
        case .like: throw unsupported("LIKE")
        case .matches:
            guard let text = lhs.stringValue, let pattern = rhs.stringValue else { return false }
            return try PredicateRegex.matches(text, pattern, caseInsensitive: options.contains(.caseInsensitive))
        }
    }

    private func resolve(_ expression: StorePredicateExpression, _ values: [String: AttributeValue]) -> AttributeValue {
        switch expression {
        case .keyPath(let path): return values[path[0]] ?? .null
        case .constant(let value): return value
        case .aggregate(let items):
            return .array(items.map { if case .constant(let v) = $0 { return v } else { return .null } })
        case .subqueryCount: return .null   // refused by checkEvaluable()
        }
    }

    private static func fold(_ text: String, _ options: ComparisonOptions) -> String {
        var folding: String.CompareOptions = []
        if options.contains(.caseInsensitive) { folding.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { folding.insert(.diacriticInsensitive) }
        return folding.isEmpty ? text : text.folding(options: folding, locale: nil)
    }

    private static func equal(_ a: AttributeValue, _ b: AttributeValue, _ options: ComparisonOptions) -> Bool {
        if a.isNull || b.isNull { return a.isNull && b.isNull }
        if let x = a.stringValue, let y = b.stringValue { return fold(x, options) == fold(y, options) }
        if let order = order(a, b, options) { return order == 0 }
        return a == b
    }

    /// -1, 0 or 1 when the two values are of comparable kinds, nil otherwise.
    private static func order(_ a: AttributeValue, _ b: AttributeValue, _ options: ComparisonOptions) -> Int? {
        switch (a, b) {
        case (.string(let x), .string(let y)):
            let p = fold(x, options), q = fold(y, options)
            return p < q ? -1 : p == q ? 0 : 1
        case (.date(let x), .date(let y)): return x < y ? -1 : x == y ? 0 : 1
        case (.date(let x), _): return b.doubleValue.map { let t = x.timeIntervalSinceReferenceDate; return t < $0 ? -1 : t == $0 ? 0 : 1 }
        default:
            guard !(a.isNull || b.isNull), let x = a.doubleValue, let y = b.doubleValue else { return nil }
            if case .integer(let i) = a, case .integer(let j) = b { return i < j ? -1 : i == j ? 0 : 1 }
            return x < y ? -1 : x == y ? 0 : 1
        }
    }
}
