import Foundation

/// Parses NSPredicate-style format strings into a ``StorePredicate``:
/// `OR` binds looser than `AND`, which binds looser than `NOT`; comparisons are
/// `[ANY|SOME|ALL|NONE] expression operator[options] expression`.
struct PredicateFormatParser {
    private let lexer: PredicateFormatLexer
    private let tokens: [PredicateToken]
    private var position = 0
    private var arguments: [AttributeValue]
    private var argumentIndex = 0
    /// Parentheses, `NOT`s, `{…}` and `ARRAY(…)` open around the current token.
    private var depth = 0

    /// The deepest nesting parsed: deeper input would overflow the stack of this recursive
    /// parser (and SQLite's expression depth); no real filter comes near it.
    static let maximumDepth = 100

    init(format: String, arguments: [AttributeValue]) throws {
        var lexer = PredicateFormatLexer(format)
        self.tokens = try lexer.tokens()
        self.lexer = lexer
        self.arguments = arguments
    }

    mutating func parse() throws -> StorePredicate {
        let predicate = try parseOr()
        guard current.kind == .end else {
            throw fail("unexpected '\(current.text)' after a complete predicate", hint: "join conditions with AND or OR")
        }
        guard argumentIndex == arguments.count else {
            throw fail("\(arguments.count) arguments given but only \(argumentIndex) placeholders", hint: "pass one argument per %@, %K, %d or %f")
        }
        return predicate
    }

    // MARK: Tokens

    private var current: PredicateToken { tokens[position] }

    /// Whether a word is a key path whatever it spells: `#`-escaped or backticked.
    private static func isEscaped(_ token: PredicateToken) -> Bool { token.text.first == "#" || token.text.first == "`" }

    private mutating func advance() { if position < tokens.count - 1 { position += 1 } }

    private func fail(_ message: String, hint: String? = nil) -> TributaryError {
        lexer.error(message, at: current.offset, token: current.text, hint: hint)
    }

    private func isKeyword(_ word: String) -> Bool {
        if case .identifier(let name) = current.kind, !Self.isEscaped(current) { return name.uppercased() == word }
        return false
    }

    private func isSymbol(_ symbol: String) -> Bool { current.kind == .symbol(symbol) }

    /// Enters one level of nesting at the current token; a predicate nested too deeply is refused.
    private mutating func nest() throws {
        depth += 1
        guard depth <= Self.maximumDepth else {
            throw fail("the predicate is nested more than \(Self.maximumDepth) levels deep", hint: "use fewer parentheses, NOTs or nested lists")
        }
    }

    private mutating func expectSymbol(_ symbol: String, hint: String) throws {
        guard isSymbol(symbol) else { throw fail("expected '\(symbol)' but found '\(current.text)'", hint: hint) }
        advance()
    }

    // MARK: Grammar

    private mutating func parseOr() throws -> StorePredicate {
        var parts = [try parseAnd()]
        while isKeyword("OR") || isSymbol("||") {
            advance()
            parts.append(try parseAnd())
        }
        return parts.count == 1 ? parts[0] : .or(parts.flatMap { if case .or(let inner) = $0 { return inner } else { return [$0] } })
    }

    private mutating func parseAnd() throws -> StorePredicate {
        var parts = [try parseNot()]
        while isKeyword("AND") || isSymbol("&&") {
            advance()
            parts.append(try parseNot())
        }
        return parts.count == 1 ? parts[0] : .and(parts.flatMap { if case .and(let inner) = $0 { return inner } else { return [$0] } })
    }

    private mutating func parseNot() throws -> StorePredicate {
        if isKeyword("NOT") || isSymbol("!") {
            try nest()
            defer { depth -= 1 }
            advance()
            return .not(try parseNot())
        }
        return try parsePrimary()
    }

    private mutating func parsePrimary() throws -> StorePredicate {
        if isSymbol("(") {
            try nest()
            defer { depth -= 1 }
            advance()
            let inner = try parseOr()
            try expectSymbol(")", hint: "close the parenthesis")
            return inner
        }
        if isKeyword("TRUEPREDICATE") { advance(); return .constant(true) }
        if isKeyword("FALSEPREDICATE") { advance(); return .constant(false) }
        return .comparison(try parseComparison())
    }

    private mutating func parseComparison() throws -> Comparison {
        var modifier = ComparisonModifier.direct
        if isKeyword("ANY") || isKeyword("SOME") { modifier = .any; advance() }
        else if isKeyword("ALL") { modifier = .all; advance() }
        else if isKeyword("NONE") { modifier = .none; advance() }
        if current.kind == .end { throw fail("expected a comparison but the predicate ended", hint: "write a comparison such as title == 'x'") }
        let left = try parseExpression()
        let opToken = current
        let op: ComparisonOperator
        switch opToken.kind {
        case .symbol("=="): op = .equal
        case .symbol("!="): op = .notEqual
        case .symbol("<"): op = .less
        case .symbol("<="): op = .lessOrEqual
        case .symbol(">"): op = .greater
        case .symbol(">="): op = .greaterOrEqual
        case .identifier(let word):
            switch word.uppercased() {
            case "BEGINSWITH": op = .beginsWith
            case "ENDSWITH": op = .endsWith
            case "CONTAINS": op = .contains
            case "LIKE": op = .like
            case "MATCHES": op = .matches
            case "IN": op = .in
            case "BETWEEN": op = .between
            default: throw fail("unknown operator '\(opToken.text)'", hint: "use ==, !=, <, <=, >, >=, BEGINSWITH, ENDSWITH, CONTAINS, LIKE, MATCHES, IN or BETWEEN")
            }
        case .end:
            throw fail("expected an operator after '\(tokens[max(0, position - 1)].text)' but the predicate ended", hint: "write a comparison such as title == 'x'")
        default:
            throw fail("expected an operator but found '\(opToken.text)'", hint: "use ==, !=, <, <=, >, >=, BEGINSWITH, ENDSWITH, CONTAINS, LIKE, MATCHES, IN or BETWEEN")
        }
        advance()
        var options: ComparisonOptions = []
        if case .options(let given) = current.kind {
            options = given
            advance()
        }
        if current.kind == .end { throw fail("'\(opToken.text)' needs a value on its right", hint: "write a value after the operator, such as 'x' or %@") }
        let rightToken = current
        let right = try parseExpression()
        if op == .between {
            try checkBetween(right, token: rightToken)
        }
        // Normalise `5 < age` to `age > 5`.
        if case .constant = left, right.isKeyPathOrSubquery, let flipped = Self.flipped(op) {
            return Comparison(left: right, op: flipped, right: left, modifier: modifier, options: options)
        }
        return Comparison(left: left, op: op, right: right, modifier: modifier, options: options)
    }

    /// `BETWEEN` takes `{low, high}`, an array argument of two, or a key path.
    private func checkBetween(_ right: StorePredicateExpression, token: PredicateToken) throws {
        let count: Int
        switch right {
        case .keyPath: return
        case .subqueryCount:
            throw lexer.error("BETWEEN needs two values, got SUBQUERY(…)", at: token.offset, token: token.text, hint: "write BETWEEN {low, high}")
        case .aggregate(let items): count = items.count
        case .constant(.array(let items)): count = items.count
        case .constant(let value):
            throw lexer.error("BETWEEN needs two values, got a \(value.kindName)", at: token.offset, token: token.text, hint: "write BETWEEN {low, high}")
        }
        guard count == 2 else {
            throw lexer.error("BETWEEN needs two values, got \(count)", at: token.offset, token: token.text, hint: "write BETWEEN {low, high}")
        }
    }

    private static func flipped(_ op: ComparisonOperator) -> ComparisonOperator? {
        switch op {
        case .equal: return .equal
        case .notEqual: return .notEqual
        case .less: return .greater
        case .lessOrEqual: return .greaterOrEqual
        case .greater: return .less
        case .greaterOrEqual: return .lessOrEqual
        default: return nil
        }
    }

    private mutating func parseExpression() throws -> StorePredicateExpression {
        let token = current
        switch token.kind {
        case .string(let s): advance(); return .constant(.string(s))
        case .integer(let i): advance(); return .constant(.integer(i))
        case .double(let d): advance(); return .constant(.double(d))
        case .placeholder(let kind): advance(); return try argument(kind, token: token)
        case .symbol("{"):
            try nest()
            defer { depth -= 1 }
            advance()
            var items: [StorePredicateExpression] = []
            if !isSymbol("}") {
                items.append(try parseExpression())
                while isSymbol(",") {
                    advance()
                    items.append(try parseExpression())
                }
            }
            try expectSymbol("}", hint: "close the list with }")
            return .aggregate(items)
        case .identifier(let name):
            let word = Self.isEscaped(token) ? "" : name.uppercased()
            // `data`, `uuid`… are key paths unless a `(` follows.
            if Self.valueForms.contains(word), position + 1 < tokens.count, tokens[position + 1].kind == .symbol("(") {
                return try parseFunction(word)
            }
            if word == "SUBQUERY", position + 1 < tokens.count, tokens[position + 1].kind == .symbol("(") {
                return try parseSubquery()
            }
            switch word {
            case "TRUE", "YES": advance(); return .constant(.bool(true))
            case "FALSE", "NO": advance(); return .constant(.bool(false))
            case "NIL", "NULL": advance(); return .constant(.null)
            case "AND", "OR", "NOT", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "MATCHES", "IN", "BETWEEN", "ANY", "SOME", "ALL", "NONE":
                throw fail("expected a key path or a value but found the keyword '\(token.text)'", hint: "prefix a key path that is a keyword with #")
            default:
                advance()
                return .keyPath(name.split(separator: ".").map(String.init))
            }
        case .end:
            throw fail("expected a key path or a value but the predicate ended", hint: "write a key path such as title or a value such as 'x'")
        default:
            throw fail("expected a key path or a value but found '\(token.text)'", hint: "quote string literals with ' or \"")
        }
    }

    /// `SUBQUERY(collection, $x, predicate).@count`, nested at most ``maximumDepth`` deep with the rest.
    private mutating func parseSubquery() throws -> StorePredicateExpression {
        let usage = "write SUBQUERY(tags, $t, $t.name BEGINSWITH 's').@count > 0"
        try nest()
        defer { depth -= 1 }
        advance()
        try expectSymbol("(", hint: usage)
        let collectionToken = current
        guard case .keyPath(let collection) = try parseExpression() else {
            throw lexer.error("SUBQUERY(…) takes a to-many key path first", at: collectionToken.offset, token: collectionToken.text, hint: usage)
        }
        try expectSymbol(",", hint: usage)
        guard case .identifier(let name) = current.kind, name.hasPrefix("$"), name.count > 1, !name.contains(".") else {
            throw fail("SUBQUERY(…) takes a variable such as $t second", hint: usage)
        }
        advance()
        try expectSymbol(",", hint: usage)
        let predicate = try parseOr()
        try expectSymbol(")", hint: "close SUBQUERY(…)")
        guard isSymbol("."), position + 1 < tokens.count, case .identifier(let suffix) = tokens[position + 1].kind, suffix.lowercased() == "@count" else {
            throw fail("SUBQUERY(…) is compared through its .@count", hint: usage)
        }
        advance()
        advance()
        return .subqueryCount(Subquery(collection: collection, variable: String(name.dropFirst()), predicate: predicate))
    }

    private static let valueForms: Set<String> = ["CAST", "UUID", "OBJECTID", "DATA", "ARRAY"]

    /// `CAST(seconds, "NSDate")`, `UUID("…")`, `OBJECTID("uri")`, `DATA("base64")`, `ARRAY(v, …)`:
    /// the forms `predicateFormat` prints for values that have no literal.
    private mutating func parseFunction(_ name: String) throws -> StorePredicateExpression {
        let start = current
        advance()
        try expectSymbol("(", hint: "write \(name)(…)")
        if name == "ARRAY" { return try parseArray(start) }
        let argument = current
        advance()
        var value: AttributeValue?
        switch (name, argument.kind) {
        case ("CAST", .integer(let i)): value = .date(Date(timeIntervalSinceReferenceDate: Double(i)))
        case ("CAST", .double(let d)): value = .date(Date(timeIntervalSinceReferenceDate: d))
        case ("UUID", .string(let s)): value = UUID(uuidString: s).map { .uuid($0) }
        case ("OBJECTID", .string(let s)): value = ObjectID(uriRepresentation: s).map { .objectID($0) }
        case ("DATA", .string(let s)): value = Data(base64Encoded: s).map { .data($0) }
        default: value = nil
        }
        if name == "CAST" {
            try expectSymbol(",", hint: "write CAST(seconds, \"NSDate\")")
            guard case .string(let type) = current.kind, type == "NSDate" else {
                throw fail("only CAST(…, \"NSDate\") is supported", hint: "write CAST(seconds since 2001-01-01, \"NSDate\")")
            }
            advance()
        }
        guard let value else {
            throw lexer.error("malformed \(name)(…) value", at: argument.offset, token: argument.text, hint: Self.functionHints[name])
        }
        try expectSymbol(")", hint: "close \(start.text)(…)")
        return .constant(value)
    }

    private static let functionHints = [
        "CAST": "write CAST(seconds since 2001-01-01, \"NSDate\")",
        "UUID": "write UUID(\"E621E1F8-C36C-495A-93FC-0C247A3E6E5F\")",
        "OBJECTID": "write OBJECTID(\"tributary://<store-uuid>/<Entity>/p<key>\")",
        "DATA": "write DATA(\"<base64>\")",
    ]

    /// `ARRAY(v, …)`: an array value, as an array argument prints. The `(` is consumed.
    private mutating func parseArray(_ start: PredicateToken) throws -> StorePredicateExpression {
        try nest()
        defer { depth -= 1 }
        var items: [AttributeValue] = []
        while !isSymbol(")") {
            if !items.isEmpty { try expectSymbol(",", hint: "separate the values of ARRAY(…) with commas") }
            let token = current
            guard case .constant(let value) = try parseExpression() else {
                throw lexer.error("ARRAY(…) holds only values", at: token.offset, token: token.text, hint: "write values such as 1, 'x' or %@")
            }
            items.append(value)
        }
        advance()
        return .constant(.array(items))
    }

    private mutating func argument(_ kind: String, token: PredicateToken) throws -> StorePredicateExpression {
        guard argumentIndex < arguments.count else {
            throw lexer.error("placeholder \(token.text) has no argument (only \(arguments.count) given)", at: token.offset, token: token.text, hint: "pass one argument per placeholder")
        }
        let value = arguments[argumentIndex]
        argumentIndex += 1
        switch kind {
        case "K":
            guard case .string(let path) = value, !path.isEmpty else {
                throw lexer.error("%K needs a key path string, got \(value.kindName)", at: token.offset, token: token.text, hint: "pass the key path as .string(\"author.name\")")
            }
            return .keyPath(path.split(separator: ".").map(String.init))
        case "d", "i":
            guard case .integer = value else { throw lexer.error("\(token.text) needs an integer, got \(value.kindName)", at: token.offset, token: token.text, hint: "use %@ for other values") }
        case "f":
            switch value {
            case .double: break
            case .integer(let i): return .constant(.double(Double(i)))
            default: throw lexer.error("\(token.text) needs a number, got \(value.kindName)", at: token.offset, token: token.text, hint: "use %@ for other values")
            }
        default:
            break
        }
        return .constant(value)
    }
}

extension StorePredicateExpression {
    /// Whether the expression reads the object (a key path or a subquery's count), not a constant.
    var isKeyPathOrSubquery: Bool {
        switch self {
        case .keyPath, .subqueryCount: return true
        case .constant, .aggregate: return false
        }
    }
}
