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

/// Writes JSON text by hand, keeping keys in the order given.
///
/// ```swift
/// var json = JSONWriter()
/// json.object { $0.field("title", .string("Hi")) }
/// print(json.text)
/// ```
public struct JSONWriter: Sendable {
    /// The text written so far.
    public private(set) var text = ""
    private var needsComma: [Bool] = []

    /// An empty writer.
    public init() {}

    /// Writes `{ … }`, with `body` writing its fields.
    public mutating func object(_ body: (inout JSONWriter) throws -> Void) rethrows {
        separate()
        text += "{"
        needsComma.append(false)
        try body(&self)
        needsComma.removeLast()
        text += "}"
    }

    /// Writes `[ … ]`, with `body` writing its elements.
    public mutating func array(_ body: (inout JSONWriter) throws -> Void) rethrows {
        separate()
        text += "["
        needsComma.append(false)
        try body(&self)
        needsComma.removeLast()
        text += "]"
    }

    /// Writes `"key":` inside an object; the next value written is the field's.
    public mutating func key(_ key: String) {
        separate()
        Self.appendString(key, to: &text)
        text += ":"
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
        self.value(.string(value))
    }

    /// Writes a value: dates in ISO 8601 (UTC), data in base64, object IDs as URIs.
    public mutating func value(_ value: AttributeValue) {
        separate()
        switch value {
        case .null: text += "null"
        case .string(let s): Self.appendString(s, to: &text)
        case .integer(let i): text += String(i)
        case .double(let d): text += d.isFinite ? (d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) + ".0" : String(d)) : "null"
        case .bool(let b): text += b ? "true" : "false"
        case .date, .uuid, .data, .objectID: Self.appendString(value.description, to: &text)
        case .array(let items):
            text += "["
            needsComma.append(false)
            for item in items { self.value(item) }
            needsComma.removeLast()
            text += "]"
        }
        if !needsComma.isEmpty { needsComma[needsComma.count - 1] = true }
    }

    /// Writes raw JSON text as a value.
    public mutating func raw(_ json: String) {
        separate()
        text += json
        if !needsComma.isEmpty { needsComma[needsComma.count - 1] = true }
    }

    private mutating func separate() {
        guard let last = needsComma.last else { return }
        if last { text += "," }
        needsComma[needsComma.count - 1] = true
    }

    /// Appends `s` as a JSON string literal. Runs of characters that need no escape are
    /// appended whole (the common case is one run: the string itself).
    public static func appendString(_ s: String, to out: inout String) {
        out += "\""
        var s = s
        s.withUTF8 { bytes in
            var runStart = 0
            for i in 0..<bytes.count {
                let byte = bytes[i]
                guard byte == 0x22 || byte == 0x5C || byte < 0x20 else { continue }
                if runStart < i { out += String(decoding: UnsafeBufferPointer(rebasing: bytes[runStart..<i]), as: UTF8.self) }
                switch byte {
                case 0x22: out += "\\\""
                case 0x5C: out += "\\\\"
                case 0x0A: out += "\\n"
                case 0x0D: out += "\\r"
                case 0x09: out += "\\t"
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    out += "\\u00"
                    out.unicodeScalars.append(Unicode.Scalar(hex[Int(byte >> 4)]))
                    out.unicodeScalars.append(Unicode.Scalar(hex[Int(byte & 0xF)]))
                }
                runStart = i + 1
            }
            if runStart == 0 {
                out += String(decoding: bytes, as: UTF8.self)
            } else if runStart < bytes.count {
                out += String(decoding: UnsafeBufferPointer(rebasing: bytes[runStart...]), as: UTF8.self)
            }
        }
        out += "\""
    }
}
