import Foundation

// Core Data's sized numbers: stored as the model's 64-bit integer or double attributes;
// reading a value a type cannot hold yields nil (a typed read then fails).

extension Int16: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .integer(Int64(self)) }
    public init?(attributeValue value: AttributeValue) {
        guard case .integer(let i) = value, let narrow = Int16(exactly: i) else { return nil }
        self = narrow
    }
}

extension Int32: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .integer(Int64(self)) }
    public init?(attributeValue value: AttributeValue) {
        guard case .integer(let i) = value, let narrow = Int32(exactly: i) else { return nil }
        self = narrow
    }
}

extension Float: AttributeValueConvertible {
    public var attributeValue: AttributeValue { .double(Double(self)) }
    public init?(attributeValue value: AttributeValue) {
        guard let d = value.doubleValue else { return nil }
        self = Float(d)
    }
}

extension AttributeValue: AttributeValueConvertible {
    public var attributeValue: AttributeValue { self }
    public init?(attributeValue value: AttributeValue) { self = value }
}
