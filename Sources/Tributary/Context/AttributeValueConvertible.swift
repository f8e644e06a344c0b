import Foundation

/// A Swift type that an attribute or relationship value converts to and from,
/// for typed access (``ManagedObject/value(forKey:as:)``, ``Managed``).
///
/// ```swift
/// let title = try post.value(forKey: "title", as: String.self)
/// let tags = try post.value(forKey: "tags", as: [ObjectID].self)
/// ```
public protocol AttributeValueConvertible {
    /// The value as an ``AttributeValue``.
    var attributeValue: AttributeValue { get }
    /// The Swift value of `value`, or nil when it is of another kind.
    init?(attributeValue value: AttributeValue)
}

extension String: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .string(self) }
    public init?(attributeValue value: AttributeValue) {
        guard case .string(let s) = value else { return nil }
        self = s
    }
}

extension Int64: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .integer(self) }
    public init?(attributeValue value: AttributeValue) {
        guard case .integer(let i) = value else { return nil }
        self = i
    }
}

extension Int: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .integer(Int64(self)) }
    public init?(attributeValue value: AttributeValue) {
        guard case .integer(let i) = value else { return nil }
        self = Int(i)
    }
}

extension Double: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .double(self) }
    public init?(attributeValue value: AttributeValue) {
        guard let d = value.doubleValue else { return nil }
        self = d
    }
}

extension Bool: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .bool(self) }
    public init?(attributeValue value: AttributeValue) {
        guard case .bool(let b) = value else { return nil }
        self = b
    }
}

extension Date: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .date(self) }
    public init?(attributeValue value: AttributeValue) {
        guard case .date(let d) = value else { return nil }
        self = d
    }
}

extension UUID: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .uuid(self) }
    public init?(attributeValue value: AttributeValue) {
        guard case .uuid(let u) = value else { return nil }
        self = u
    }
}

extension Data: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .data(self) }
    public init?(attributeValue value: AttributeValue) {
        guard case .data(let d) = value else { return nil }
        self = d
    }
}

extension ObjectID: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .objectID(self) }
    public init?(attributeValue value: AttributeValue) {
        guard case .objectID(let id) = value else { return nil }
        self = id
    }
}

extension Array: AttributeValueConvertible where Element: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .array(map(\.attributeValue)) }
    public init?(attributeValue value: AttributeValue) {
        guard case .array(let items) = value else { return nil }
        var result: [Element] = []
        for item in items {
            guard let element = Element(attributeValue: item) else { return nil }
            result.append(element)
        }
        self = result
    }
}

extension Optional: AttributeValueConvertible where Wrapped: AttributeValueConvertible {
    public var attributeValue: AttributeValue { self?.attributeValue ?? .null }
    public init?(attributeValue value: AttributeValue) {
        if value.isNull { self = .none; return }
        guard let wrapped = Wrapped(attributeValue: value) else { return nil }
        self = .some(wrapped)
    }
}
