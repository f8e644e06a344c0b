import Foundation

/// A value of an attribute, a relationship target, or a predicate argument.
///
/// Rows read from a store, dictionaries given to batch requests and the
/// arguments of predicates all use this one type, so a value read from one
/// place can be handed to another unchanged.
///
/// ```swift
/// let post: [String: AttributeValue] = [
///     "title": "Hello",                     // string literal
///     "externalID": .string("ext-1"),
///     "createdAt": .date(Date()),
/// ]
/// ```
public enum AttributeValue: Sendable, Hashable {
    case null
    case string(String)
    case integer(Int64)
    case double(Double)
    case bool(Bool)
    case date(Date)
    case uuid(UUID)
    case data(Data)
    /// A to-one relationship's target.
    indirect case objectID(ObjectID)
    /// A list: the argument of `IN`, or the targets of a to-many relationship.
    case array([AttributeValue])

    /// `true` for ``null``.
    public var isNull: Bool { if case .null = self { return true } else { return false } }

    /// The value as a string, if it is one.
    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }

    /// The value as an integer, if it is an integer or a bool.
    public var integerValue: Int64? {
        switch self {
        case .integer(let i): return i
        case .bool(let b): return b ? 1 : 0
        default: return nil
        }
    }

    /// The value as a double, if it is numeric.
    public var doubleValue: Double? {
        switch self {
        case .double(let d): return d
        case .integer(let i): return Double(i)
        default: return nil
        }
    }

    /// The value as a date, if it is one.
    public var dateValue: Date? { if case .date(let d) = self { return d } else { return nil } }

    /// A short name of the value's kind, used in error messages.
    public var kindName: String {
        switch self {
        case .null: return "null"
        case .string: return "string"
        case .integer: return "integer"
        case .double: return "double"
        case .bool: return "bool"
        case .date: return "date"
        case .uuid: return "UUID"
        case .data: return "binary data"
        case .objectID: return "object ID"
        case .array: return "array"
        }
    }
}

extension AttributeValue: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
}

extension AttributeValue: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) { self = .integer(value) }
}

extension AttributeValue: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension AttributeValue: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension AttributeValue: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: AttributeValue...) { self = .array(elements) }
}

extension AttributeValue: CustomStringConvertible {
    /// A readable form: strings unquoted, dates in ISO 8601 (UTC), data in base64.
    public var description: String {
        switch self {
        case .null: return "nil"
        case .string(let s): return s
        case .integer(let i): return String(i)
        case .double(let d): return String(d)
        case .bool(let b): return b ? "true" : "false"
        case .date(let d): return ISO8601.string(from: d)
        case .uuid(let u): return u.uuidString.lowercased()
        case .data(let d): return d.base64EncodedString()
        case .objectID(let o): return o.uriRepresentation
        case .array(let a): return "[" + a.map(\.description).joined(separator: ", ") + "]"
        }
    }
}

extension AttributeValue {
    /// Keys as a JSON array of numbers, as text bound to a statement that reads them with
    /// `json_each(?)`.
    static func keyList(_ keys: [Int64]) -> AttributeValue {
        .string("[" + keys.map(String.init).joined(separator: ",") + "]")
    }
}
