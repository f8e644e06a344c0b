import Foundation

/// A parsed JSON value that keeps booleans, integers and decimals apart.
///
/// ```swift
/// let value = try JSONValue.parse(#"{"title": "Hi", "views": 3}"#)
/// ```
public enum JSONValue: Sendable, Equatable, Decodable {
    case null
    case bool(Bool)
    case integer(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null; return }
        if let value = try? container.decode(Bool.self) { self = .bool(value); return }
        if let value = try? container.decode(Int64.self) { self = .integer(value); return }
        if let value = try? container.decode(Double.self) { self = .double(value); return }
        if let value = try? container.decode(String.self) { self = .string(value); return }
        if let value = try? container.decode([JSONValue].self) { self = .array(value); return }
        self = .object(try container.decode([String: JSONValue].self))
    }

    /// Parses one JSON text.
    public static func parse(_ text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    /// Parses one JSON text from bytes.
    public static func parse(_ data: Data) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: data)
    }

    var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .integer, .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// Writes JSON text by hand, keeping keys in the order given, into a byte buffer
/// (appending bytes is much cheaper than appending to a `String`; the change-stream
/// encoders write every record through it).
///
/// ```swift
/// var json = JSONWriter()
/// json.object { $0.field("title", .string("Hi")) }
/// print(json.text)
/// ```
public struct JSONWriter: Sendable {
    /// The UTF-8 bytes written so far.
    public private(set) var bytes: [UInt8] = []
    private var needsComma: [Bool] = []

    /// The text written so far.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// An empty writer.
    public init() {}

    /// Empties the writer, keeping its buffer's capacity, to write the next document.
    ///
    /// ```swift
    /// json.reset()
    /// json.object { $0.field("n", .integer(2)) }
    /// ```
    public mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        needsComma.removeAll(keepingCapacity: true)
    }

    /// Writes `{ … }`, with `body` writing its fields.
    public mutating func object(_ body: (inout JSONWriter) throws -> Void) rethrows {
        separate()
        bytes.append(0x7B)
        needsComma.append(false)
        try body(&self)
        needsComma.removeLast()
        bytes.append(0x7D)
    }

    /// Writes `[ … ]`, with `body` writing its elements.
    public mutating func array(_ body: (inout JSONWriter) throws -> Void) rethrows {
        separate()
        bytes.append(0x5B)
        needsComma.append(false)
        try body(&self)
        needsComma.removeLast()
        bytes.append(0x5D)
    }

    /// Writes `"key":` inside an object; the next value written is the field's.
    public mutating func key(_ key: String) {
        separate()
        Self.appendString(key, to: &bytes)
        bytes.append(0x3A)
        if !needsComma.isEmpty { needsComma[needsComma.count - 1] = false }
    }

    /// Writes a field with an attribute value.
    public mutating func field(_ key: String, _ value: AttributeValue) {
        self.key(key)
        self.value(value)
    }

    /// Writes a field with a string.
    public mutating func field(_ key: String, _ value: String) {
        self.key(key)
        separate()
        Self.appendString(value, to: &bytes)
        if !needsComma.isEmpty { needsComma[needsComma.count - 1] = true }
    }

    /// Writes a value: dates in ISO 8601 (UTC), data in base64, object IDs as URIs.
    public mutating func value(_ value: AttributeValue) {
        separate()
        switch value {
        case .null: bytes += [0x6E, 0x75, 0x6C, 0x6C]
        case .string(let s): Self.appendString(s, to: &bytes)
        case .integer(let i): bytes += String(i).utf8
        case .double(let d): bytes += Self.number(d).utf8
        case .bool(let b): bytes += (b ? "true" : "false").utf8
        case .date(let date): Self.appendDate(date, to: &bytes)
        case .uuid, .data, .objectID: Self.appendString(value.description, to: &bytes)
        case .array(let items):
            bytes.append(0x5B)
            needsComma.append(false)
            for item in items { self.value(item) }
            needsComma.removeLast()
            bytes.append(0x5D)
        }
        if !needsComma.isEmpty { needsComma[needsComma.count - 1] = true }
    }

    /// A double as JSON: an infinity (SQLite stores them; JSON has no word for them) as the
    /// string `"Infinity"` or `"-Infinity"`, as Jackson (Debezium's JSON) writes them: every
    /// JSON parser reads it, and replay reads it back into a double attribute as the
    /// infinity, where `null` said the value was absent. A negative zero keeps its sign
    /// (`-0.0`), as a column without affinity keeps it.
    static func number(_ d: Double) -> String {
        if d.isNaN { return "null" }
        if d.isInfinite { return d < 0 ? "\"-Infinity\"" : "\"Infinity\"" }
        if d == 0 { return d.sign == .minus ? "-0.0" : "0.0" }
        return d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) + ".0" : String(d)
    }

    /// A date as a JSON value: ISO 8601 (UTC) in quotes, or a number where ISO 8601 cannot
    /// write it (``appendUnsupportedDate(_:to:)``).
    package static func appendDate(_ date: Date, to bytes: inout [UInt8]) {
        guard !appendUnsupportedDate(date, to: &bytes) else { return }
        bytes.append(0x22)
        ISO8601.append(date, to: &bytes)
        bytes.append(0x22)
    }

    /// Writes a date outside the dates ISO 8601 writes (``ISO8601/supportedSeconds``: another
    /// program stored it, as Tributary refuses such dates) as its seconds since 1970, a JSON
    /// number (``number(_:)``) that readers parse, rather than the note terminals show
    /// (``ISO8601/unsupportedText(_:)``); false, writing nothing, for any other date.
    package static func appendUnsupportedDate(_ date: Date, to bytes: inout [UInt8]) -> Bool {
        guard !ISO8601.isSupported(date) else { return false }
        bytes += number(date.timeIntervalSince1970).utf8
        return true
    }

    /// Writes raw JSON text as a value.
    public mutating func raw(_ json: String) {
        separate()
        bytes += json.utf8
        if !needsComma.isEmpty { needsComma[needsComma.count - 1] = true }
    }

    private mutating func separate() {
        guard let last = needsComma.last else { return }
        if last { bytes.append(0x2C) }
        needsComma[needsComma.count - 1] = true
    }

    /// Appends `s` as a JSON string literal.
    public static func appendString(_ s: String, to out: inout String) {
        var bytes: [UInt8] = []
        appendString(s, to: &bytes)
        out += String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `s` as a JSON string literal, as UTF-8.
    public static func appendString(_ s: String, to out: inout [UInt8]) {
        var s = s
        s.withUTF8 { appendString(validUTF8: $0, to: &out) }
    }

    /// Appends text given as UTF-8 bytes as a JSON string literal, exactly as
    /// `appendString(_:to:)` appends `String(decoding: utf8, as: UTF8.self)`:
    /// invalid sequences are repaired the same way. For text read in place (history payloads).
    ///
    /// ```swift
    /// var out: [UInt8] = []
    /// Array("say \"hi\"".utf8).withUnsafeBufferPointer { JSONWriter.appendString(utf8: $0, to: &out) }
    /// ```
    public static func appendString(utf8: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        var ascii = true
        for byte in utf8 where byte >= 0x80 { ascii = false; break }
        if ascii { return appendString(validUTF8: utf8, to: &out) }
        appendString(String(decoding: utf8, as: UTF8.self), to: &out)
    }

    /// Runs of characters that need no escape are copied whole (usually one run: the string itself).
    private static func appendString(validUTF8 utf8: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        out.append(0x22)
        var runStart = 0
        // A plain byte loop: Swift's SIMD types were measured several times slower here.
        for i in 0..<utf8.count {
            let byte = utf8[i]
            guard byte == 0x22 || byte == 0x5C || byte < 0x20 else { continue }
            let at = i
            if runStart < at { out += UnsafeBufferPointer(rebasing: utf8[runStart..<at]) }
            out.append(0x5C)
            switch byte {
            case 0x22: out.append(0x22)
            case 0x5C: out.append(0x5C)
            case 0x0A: out.append(0x6E)
            case 0x0D: out.append(0x72)
            case 0x09: out.append(0x74)
            default:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                out += [0x75, 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            }
            runStart = at + 1
        }
        if runStart < utf8.count { out += UnsafeBufferPointer(rebasing: utf8[runStart...]) }
        out.append(0x22)
    }
}
