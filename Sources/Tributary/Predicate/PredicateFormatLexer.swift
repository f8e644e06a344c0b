/// A token of an NSPredicate-style format string, with its offset for errors.
struct PredicateToken: Equatable {
    enum Kind: Equatable {
        case identifier(String)
        case string(String)
        case integer(Int64)
        case double(Double)
        case placeholder(String)
        case symbol(String)
        case options(ComparisonOptions)
        case end
    }
    let kind: Kind
    let offset: Int
    let text: String
}

/// Splits a format string into tokens.
struct PredicateFormatLexer {
    let format: String
    private let chars: [Character]
    private var i = 0

    init(_ format: String) {
        self.format = format
        self.chars = Array(format)
    }

    func error(_ message: String, at offset: Int, token: String, hint: String? = nil) -> TributaryError {
        TributaryError(.invalidPredicate, message, location: "predicate \"\(format)\" at offset \(offset) ('\(token)')", hint: hint)
    }

    mutating func tokens() throws -> [PredicateToken] {
        var result: [PredicateToken] = []
        while true {
            let token = try next()
            result.append(token)
            if token.kind == .end { return result }
        }
    }

    private mutating func next() throws -> PredicateToken {
        while i < chars.count, chars[i].isWhitespace { i += 1 }
        let start = i
        guard i < chars.count else { return PredicateToken(kind: .end, offset: start, text: "end of predicate") }
        let c = chars[i]
        func token(_ kind: PredicateToken.Kind) -> PredicateToken {
            PredicateToken(kind: kind, offset: start, text: String(chars[start..<i]))
        }
        if c == "'" || c == "\"" {
            i += 1
            var value = ""
            while i < chars.count, chars[i] != c {
                if chars[i] == "\\", i + 1 < chars.count {
                    i += 1
                    switch chars[i] {
                    case "n": value.append("\n")
                    case "t": value.append("\t")
                    case "r": value.append("\r")
                    default: value.append(chars[i])
                    }
                } else {
                    value.append(chars[i])
                }
                i += 1
            }
            guard i < chars.count else {
                throw error("unterminated string literal", at: start, token: String(chars[start...].prefix(20)), hint: "close the string with \(c)")
            }
            i += 1
            return token(.string(value))
        }
        if c.isNumber || (c == "-" && i + 1 < chars.count && chars[i + 1].isNumber) {
            i += 1
            var isDouble = false
            while i < chars.count {
                let d = chars[i]
                if d.isNumber { i += 1; continue }
                if d == ".", !isDouble, i + 1 < chars.count, chars[i + 1].isNumber { isDouble = true; i += 1; continue }
                if d == "e" || d == "E", i + 1 < chars.count, chars[i + 1].isNumber || ((chars[i + 1] == "-" || chars[i + 1] == "+") && i + 2 < chars.count && chars[i + 2].isNumber) {
                    isDouble = true
                    i += 2
                    continue
                }
                break
            }
            let text = String(chars[start..<i])
            if !isDouble, let value = Int64(text) { return token(.integer(value)) }
            guard let value = Double(text) else { throw error("malformed number", at: start, token: text, hint: "write numbers such as 42, -7 or 3.25") }
            return token(.double(value))
        }
        if c.isLetter || c == "_" || c == "$" || c == "@" || c == "#" || c == "`" {
            return try keyPath(from: start)
        }
        if c == "%" {
            i += 1
            var spec = ""
            while i < chars.count, chars[i] == "l" { spec.append("l"); i += 1 }
            guard i < chars.count, "@Kdif".contains(chars[i]) else {
                throw error("unknown format placeholder", at: start, token: String(chars[start..<min(i + 1, chars.count)]), hint: "use %@, %K, %d or %f")
            }
            spec.append(chars[i])
            i += 1
            return token(.placeholder(String(spec.last!)))
        }
        if c == "[" {
            i += 1
            var options: ComparisonOptions = []
            while i < chars.count, chars[i] != "]" {
                switch chars[i].lowercased() {
                case "c": options.insert(.caseInsensitive)
                case "d": options.insert(.diacriticInsensitive)
                case "n", "l": break
                default: throw error("unknown comparison option", at: i, token: String(chars[i]), hint: "use [c], [d] or [cd]")
                }
                i += 1
            }
            guard i < chars.count else { throw error("unterminated option bracket", at: start, token: "[", hint: "write [c], [d] or [cd]") }
            i += 1
            return token(.options(options))
        }
        let two = i + 1 < chars.count ? String(chars[i...i + 1]) : ""
        if ["==", "!=", "<>", "<=", ">=", "=<", "=>", "&&", "||"].contains(two) {
            i += 2
            let normal = ["<>": "!=", "=<": "<=", "=>": ">="][two] ?? two
            return PredicateToken(kind: .symbol(normal), offset: start, text: two)
        }
        if c == ".", i + 1 < chars.count, chars[i + 1] == "@" || chars[i + 1].isLetter {
            // `SUBQUERY(…).@count`: a dot after a closing parenthesis.
            i += 1
            return token(.symbol("."))
        }
        if "=<>!(){},".contains(c) {
            i += 1
            return PredicateToken(kind: .symbol(c == "=" ? "==" : String(c)), offset: start, text: String(c))
        }
        throw error("unexpected character", at: start, token: String(c), hint: "quote string literals with ' or \"")
    }

    /// A key path or a word: parts joined by `.`, each bare (`title`) or in backticks
    /// (`` `unit price` ``, for a name another program gave that is not a plain word). A
    /// leading `#` escapes a reserved word; a backticked first part is never a keyword.
    private mutating func keyPath(from start: Int) throws -> PredicateToken {
        var name = ""
        if chars[i] == "#" { i += 1 }
        while true {
            if i < chars.count, chars[i] == "`" {
                let open = i
                i += 1
                while i < chars.count, chars[i] != "`" { i += 1 }
                guard i < chars.count else { throw error("unterminated quoted name", at: open, token: String(chars[open...].prefix(20)), hint: "close the name with `") }
                guard i > open + 1 else { throw error("empty quoted name", at: open, token: "``", hint: "write a name between the backticks") }
                name += String(chars[(open + 1)..<i])
                i += 1
            } else {
                let part = i
                while i < chars.count, chars[i].isLetter || chars[i].isNumber || chars[i] == "_" || chars[i] == "$" || chars[i] == "@" { i += 1 }
                name += String(chars[part..<i])
            }
            guard i + 1 < chars.count, chars[i] == ".", chars[i + 1].isLetter || chars[i + 1] == "@" || chars[i + 1] == "_" || chars[i + 1] == "`" else { break }
            name += "."
            i += 1
        }
        return PredicateToken(kind: .identifier(name), offset: start, text: String(chars[start..<i]))
    }
}
