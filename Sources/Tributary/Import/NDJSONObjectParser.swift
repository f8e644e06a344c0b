import Foundation

/// One field's value as ``NDJSONObjectParser`` found it: scalars without allocation
/// (a string's bytes are unescaped, valid UTF-8, and valid only during the callback),
/// arrays and objects as ``JSONValue``.
enum NDJSONField {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(UnsafeBufferPointer<UInt8>)
    case nested(JSONValue)

    /// What kind of JSON value it is, in ``JSONValue``'s words.
    var kindName: String {
        let value: JSONValue = switch self {
        case .null: .null
        case .bool(let b): .bool(b)
        case .integer(let i): .integer(i)
        case .double(let d): .double(d)
        case .string: .string("")
        case .nested(let nested): nested
        }
        return value.kindName
    }
}

/// What is wrong with a line's JSON, and at which byte (1-based).
struct NDJSONSyntaxError: Error {
    let message: String
    let hint: String
}

/// A JSON parser for one object per line that reads the line's bytes in place and
/// hands each field to a callback as it is decoded: no tree, no `String` per value.
/// Strict: UTF-8 is validated, control characters in strings and trailing text are
/// refused, nesting is bounded (so a hostile line cannot exhaust the stack).
///
/// ```swift
/// var parser = NDJSONObjectParser()
/// try parser.parseObject(line) { key, value in … }
/// ```
struct NDJSONObjectParser {
    /// Nesting allowed inside a field's value.
    static let maximumDepth = 64

    /// Unescaped keys and string values (a string given in place needs neither).
    private let keyScratch = ByteScratch()
    private let valueScratch = ByteScratch()
    private var numberScratch: [CChar] = []

    init() {}

    /// Parses `line`, which must be one JSON object, calling `field` for each key in order
    /// (the buffers given are valid during the call only).
    mutating func parseObject(_ line: UnsafeBufferPointer<UInt8>, _ field: (UnsafeBufferPointer<UInt8>, NDJSONField) throws -> Void) throws {
        guard let base = line.baseAddress, !line.isEmpty else { throw Self.malformed("the line is empty", at: 0) }
        var cursor = Cursor(base: base, end: base + line.count)
        cursor.skipSpace()
        guard cursor.peek() == UInt8(ascii: "{") else {
            let found: String
            switch cursor.peek() {
            case UInt8(ascii: "["): found = "an array"
            case UInt8(ascii: "\""): found = "a string"
            case UInt8(ascii: "t"), UInt8(ascii: "f"): found = "a boolean"
            case UInt8(ascii: "n"): found = "null"
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): found = "a number"
            default: throw Self.malformed("expected '{'", at: cursor.offset(from: base))
            }
            throw NDJSONSyntaxError(message: "expected a JSON object, found \(found)", hint: "each line must be one JSON object")
        }
        cursor.advance()
        cursor.skipSpace()
        if cursor.peek() == UInt8(ascii: "}") {
            cursor.advance()
        } else {
            while true {
                cursor.skipSpace()
                guard cursor.peek() == UInt8(ascii: "\"") else { throw Self.malformed("expected a key in double quotes", at: cursor.offset(from: base)) }
                let key = try scanString(&cursor, base: base, into: keyScratch)
                cursor.skipSpace()
                guard cursor.peek() == UInt8(ascii: ":") else { throw Self.malformed("expected ':' after a key", at: cursor.offset(from: base)) }
                cursor.advance()
                cursor.skipSpace()
                try field(key, try parseField(&cursor, base: base))
                cursor.skipSpace()
                let next = cursor.peek()
                cursor.advance()
                if next == UInt8(ascii: ",") { continue }
                if next == UInt8(ascii: "}") { break }
                throw Self.malformed("expected ',' or '}'", at: cursor.offset(from: base) - 1)
            }
        }
        cursor.skipSpace()
        guard cursor.isAtEnd else { throw Self.malformed("text after the object", at: cursor.offset(from: base)) }
    }

    /// One value.
    private mutating func parseField(_ cursor: inout Cursor, base: UnsafePointer<UInt8>) throws -> NDJSONField {
        switch cursor.peek() {
        case UInt8(ascii: "\""): return .string(try scanString(&cursor, base: base, into: valueScratch))
        case UInt8(ascii: "{"), UInt8(ascii: "["): return .nested(try parseNested(&cursor, base: base, depth: 1))
        default: return try parseScalar(&cursor, base: base)
        }
    }

    /// A literal or a number.
    private mutating func parseScalar(_ cursor: inout Cursor, base: UnsafePointer<UInt8>) throws -> NDJSONField {
        if cursor.consume("true") { return .bool(true) }
        if cursor.consume("false") { return .bool(false) }
        if cursor.consume("null") { return .null }
        let c = cursor.peek()
        guard c == UInt8(ascii: "-") || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) else {
            throw Self.malformed("expected a value", at: cursor.offset(from: base))
        }
        return try parseNumber(&cursor, base: base)
    }

    /// A JSON number: an integer when it is one and fits in 64 bits, else a double.
    private mutating func parseNumber(_ cursor: inout Cursor, base: UnsafePointer<UInt8>) throws -> NDJSONField {
        let start = cursor.p
        let negative = cursor.peek() == UInt8(ascii: "-")
        if negative { cursor.advance() }
        let digitsStart = cursor.p
        var magnitude: UInt64 = 0
        var overflow = false
        while let digit = cursor.digit() {
            let (times, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (plus, o2) = times.addingReportingOverflow(UInt64(digit))
            overflow = overflow || o1 || o2
            magnitude = plus
            cursor.advance()
        }
        let digitCount = digitsStart.distance(to: cursor.p)
        guard digitCount > 0 else { throw Self.malformed("expected digits", at: cursor.offset(from: base)) }
        guard digitCount == 1 || digitsStart.pointee != UInt8(ascii: "0") else { throw Self.malformed("a number with a leading zero", at: digitsStart - base) }
        var isInteger = true
        if cursor.peek() == UInt8(ascii: ".") {
            isInteger = false
            cursor.advance()
            guard cursor.digit() != nil else { throw Self.malformed("expected digits after '.'", at: cursor.offset(from: base)) }
            while cursor.digit() != nil { cursor.advance() }
        }
        if cursor.peek() == UInt8(ascii: "e") || cursor.peek() == UInt8(ascii: "E") {
            isInteger = false
            cursor.advance()
            if cursor.peek() == UInt8(ascii: "+") || cursor.peek() == UInt8(ascii: "-") { cursor.advance() }
            guard cursor.digit() != nil else { throw Self.malformed("expected digits in the exponent", at: cursor.offset(from: base)) }
            while cursor.digit() != nil { cursor.advance() }
        }
        if isInteger && !overflow {
            if !negative, magnitude <= UInt64(Int64.max) { return .integer(Int64(magnitude)) }
            if negative, magnitude <= UInt64(Int64.max) + 1 { return .integer(magnitude == UInt64(Int64.max) + 1 ? .min : -Int64(magnitude)) }
        }
        // strtod on a NUL-terminated copy: exact, and no String.
        let length = start.distance(to: cursor.p)
        numberScratch.removeAll(keepingCapacity: true)
        for i in 0..<length { numberScratch.append(CChar(bitPattern: start[i])) }
        numberScratch.append(0)
        let value = numberScratch.withUnsafeBufferPointer { strtod($0.baseAddress!, nil) }
        guard value.isFinite else {
            let text = String(decoding: UnsafeBufferPointer(start: start, count: min(length, 40)), as: UTF8.self)
            throw NDJSONSyntaxError(message: "the number \(text) is out of range", hint: "numbers must fit in a 64-bit double")
        }
        return .double(value)
    }

    /// Scans a string at the cursor (on its opening quote) and returns its bytes: in place
    /// without escapes, else unescaped into `scratch`. Either way they are checked to be UTF-8.
    private func scanString(_ cursor: inout Cursor, base: UnsafePointer<UInt8>, into scratch: ByteScratch) throws -> UnsafeBufferPointer<UInt8> {
        cursor.advance()
        let start = cursor.p
        var high: UInt8 = 0
        // The fast path: no escape.
        while cursor.p < cursor.end {
            let c = cursor.p.pointee
            if c == UInt8(ascii: "\"") {
                let bytes = UnsafeBufferPointer(start: start, count: start.distance(to: cursor.p))
                cursor.advance()
                if high & 0x80 != 0 { try Self.checkUTF8(bytes, at: start - base) }
                return bytes
            }
            if c == UInt8(ascii: "\\") { break }
            if c < 0x20 { throw Self.malformed("a control character inside a string (escape it)", at: cursor.offset(from: base)) }
            high |= c
            cursor.advance()
        }
        guard cursor.p < cursor.end else { throw Self.malformed("a string without its closing quote", at: start - base) }
        scratch.removeAll()
        scratch.append(UnsafeBufferPointer(start: start, count: start.distance(to: cursor.p)))
        while true {
            guard cursor.p < cursor.end else { throw Self.malformed("a string without its closing quote", at: start - base) }
            let c = cursor.p.pointee
            cursor.advance()
            switch c {
            case UInt8(ascii: "\""):
                if high & 0x80 != 0 { try Self.checkUTF8(scratch.bytes, at: start - base) }
                return scratch.bytes
            case UInt8(ascii: "\\"):
                try unescape(&cursor, base: base, into: scratch)
            case 0..<0x20:
                throw Self.malformed("a control character inside a string (escape it)", at: cursor.offset(from: base) - 1)
            default:
                high |= c
                scratch.append(c)
            }
        }
    }

    /// One escape after its backslash, appended as UTF-8.
    private func unescape(_ cursor: inout Cursor, base: UnsafePointer<UInt8>, into scratch: ByteScratch) throws {
        let c = cursor.peek()
        cursor.advance()
        switch c {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(c)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hex4(&cursor, base: base)
            if (0xD800..<0xDC00).contains(scalar) {
                guard cursor.consume("\\u") else { throw Self.malformed("a lone UTF-16 surrogate in \\u escapes", at: cursor.offset(from: base)) }
                let low = try hex4(&cursor, base: base)
                guard (0xDC00..<0xE000).contains(low) else { throw Self.malformed("a lone UTF-16 surrogate in \\u escapes", at: cursor.offset(from: base)) }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw Self.malformed("a lone UTF-16 surrogate in \\u escapes", at: cursor.offset(from: base))
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw Self.malformed("an invalid \\u escape", at: cursor.offset(from: base)) }
            UTF8.encode(unicode) { scratch.append($0) }
        default:
            throw Self.malformed("an invalid escape '\\\(Unicode.Scalar(c))'", at: cursor.offset(from: base) - 2)
        }
    }

    private func hex4(_ cursor: inout Cursor, base: UnsafePointer<UInt8>) throws -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            let c = cursor.peek()
            let digit: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw Self.malformed("expected 4 hex digits after \\u", at: cursor.offset(from: base))
            }
            value = value << 4 | digit
            cursor.advance()
        }
        return value
    }

    /// An array or object, as a ``JSONValue``, at most ``maximumDepth`` deep.
    private mutating func parseNested(_ cursor: inout Cursor, base: UnsafePointer<UInt8>, depth: Int) throws -> JSONValue {
        guard depth <= Self.maximumDepth else { throw Self.malformed("values nested more than \(Self.maximumDepth) deep", at: cursor.offset(from: base)) }
        let isArray = cursor.peek() == UInt8(ascii: "[")
        let close = isArray ? UInt8(ascii: "]") : UInt8(ascii: "}")
        cursor.advance()
        var items: [JSONValue] = []
        var fields: [String: JSONValue] = [:]
        cursor.skipSpace()
        if cursor.peek() == close {
            cursor.advance()
            return isArray ? .array(items) : .object(fields)
        }
        while true {
            cursor.skipSpace()
            var key = ""
            if !isArray {
                guard cursor.peek() == UInt8(ascii: "\"") else { throw Self.malformed("expected a key in double quotes", at: cursor.offset(from: base)) }
                key = try ownedString(&cursor, base: base)
                cursor.skipSpace()
                guard cursor.peek() == UInt8(ascii: ":") else { throw Self.malformed("expected ':' after a key", at: cursor.offset(from: base)) }
                cursor.advance()
                cursor.skipSpace()
            }
            let value: JSONValue
            switch cursor.peek() {
            case UInt8(ascii: "\""): value = .string(try ownedString(&cursor, base: base))
            case UInt8(ascii: "{"), UInt8(ascii: "["): value = try parseNested(&cursor, base: base, depth: depth + 1)
            default:
                switch try parseScalar(&cursor, base: base) {
                case .null: value = .null
                case .bool(let b): value = .bool(b)
                case .integer(let i): value = .integer(i)
                case .double(let d): value = .double(d)
                case .string, .nested: value = .null   // parseScalar returns neither
                }
            }
            if isArray {
                items.append(value)
            } else {
                guard fields.updateValue(value, forKey: key) == nil else { throw NDJSONSyntaxError(message: "the key '\(key)' appears twice in one object", hint: "give each key once") }
            }
            cursor.skipSpace()
            let next = cursor.peek()
            cursor.advance()
            if next == UInt8(ascii: ",") { continue }
            if next == close { break }
            throw Self.malformed("expected ',' or '\(Unicode.Scalar(close))'", at: cursor.offset(from: base) - 1)
        }
        return isArray ? .array(items) : .object(fields)
    }

    private func ownedString(_ cursor: inout Cursor, base: UnsafePointer<UInt8>) throws -> String {
        String(decoding: try scanString(&cursor, base: base, into: valueScratch), as: UTF8.self)
    }

    /// Throws unless `bytes` are UTF-8.
    static func checkUTF8(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) throws {
        var decoder = UTF8()
        var iterator = bytes.makeIterator()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return
            case .error: throw NDJSONSyntaxError(message: "invalid UTF-8 in the string at byte \(offset + 1)", hint: "save the file as UTF-8")
            }
        }
    }

    static func malformed(_ what: String, at offset: Int) -> NDJSONSyntaxError {
        NDJSONSyntaxError(message: "malformed JSON at byte \(offset + 1): \(what)", hint: "each line must be one JSON object, such as {\"title\": \"Hello\"}")
    }
}

/// A read position in a line.
private struct Cursor {
    var p: UnsafePointer<UInt8>
    let end: UnsafePointer<UInt8>

    init(base: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>) {
        self.p = base
        self.end = end
    }

    var isAtEnd: Bool { p >= end }

    /// The byte at the cursor, or 0 at the end.
    @inline(__always) func peek() -> UInt8 { p < end ? p.pointee : 0 }

    @inline(__always) mutating func advance() { if p < end { p += 1 } }

    @inline(__always) func digit() -> UInt8? {
        let c = peek()
        return c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") ? c - UInt8(ascii: "0") : nil
    }

    mutating func skipSpace() {
        while p < end, p.pointee == 0x20 || p.pointee == 0x09 || p.pointee == 0x0A || p.pointee == 0x0D { p += 1 }
    }

    /// Consumes `literal` if the bytes at the cursor are it.
    mutating func consume(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard end - p >= count, memcmp(p, literal.utf8Start, count) == 0 else { return false }
        p += count
        return true
    }

    func offset(from base: UnsafePointer<UInt8>) -> Int { base.distance(to: p) }
}

/// A growable byte buffer reused line after line (one parser owns it).
final class ByteScratch {
    private var storage = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
    private var capacity = 256
    private(set) var count = 0

    deinit { storage.deallocate() }

    /// The bytes held; valid until the next change.
    var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: storage, count: count) }

    func removeAll() { count = 0 }

    func append(_ byte: UInt8) {
        if count == capacity { grow(count + 1) }
        storage[count] = byte
        count += 1
    }

    func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        if count + bytes.count > capacity { grow(count + bytes.count) }
        (storage + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    private func grow(_ needed: Int) {
        var size = capacity * 2
        while size < needed { size *= 2 }
        let larger = UnsafeMutablePointer<UInt8>.allocate(capacity: size)
        larger.update(from: storage, count: count)
        storage.deallocate()
        storage = larger
        capacity = size
    }
}
