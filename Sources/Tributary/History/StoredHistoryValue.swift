import Foundation

/// A property's value as the history stores it, read in place by
/// ``HistoryChangeView/forEachStoredProperty(_:)``: no `String`, `Data` or ``ObjectID`` is
/// made, so code that transcodes much history (the stream exporter) skips the cost of
/// building ``AttributeValue``s. Text and binary bytes point into the transaction's payload
/// and are valid only inside the closure that receives them.
///
/// ```swift
/// try change.forEachStoredProperty { property in
///     if case .text(let utf8)? = property.after { print(utf8.count, "bytes") }
/// }
/// ```
public enum StoredHistoryValue {
    /// No value.
    case null
    /// An integer attribute's value.
    case integer(Int64)
    /// A double attribute's value.
    case double(Double)
    /// The bytes SQLite stored as text (UTF-8, not checked: repair before trusting).
    case text(UnsafeBufferPointer<UInt8>)
    /// A binary attribute's bytes.
    case blob(UnsafeBufferPointer<UInt8>)
    /// A Boolean attribute's value.
    case bool(Bool)
    /// Seconds since 1970.
    case date(Double)
    /// A UUID attribute's value.
    case uuid(UUID)
    /// A to-one relationship's target: its entity and primary key.
    case objectID(entityName: String, primaryKey: Int64)

    /// The value as an ``AttributeValue`` (copying text and bytes), in store `storeID`.
    ///
    /// ```swift
    /// let value = stored.attributeValue(storeID: store.identifier)
    /// ```
    public func attributeValue(storeID: UUID) -> AttributeValue {
        switch self {
        case .null: return .null
        case .integer(let i): return .integer(i)
        case .double(let d): return .double(d)
        case .text(let utf8): return .string(String(decoding: utf8, as: UTF8.self))
        case .blob(let bytes): return .data(Data(bytes))
        case .bool(let b): return .bool(b)
        case .date(let seconds): return .date(Date(timeIntervalSince1970: seconds))
        case .uuid(let u): return .uuid(u)
        case .objectID(let entity, let key): return .objectID(ObjectID(storeID: storeID, entityName: entity, primaryKey: key))
        }
    }
}

/// One property of a change read in place; see ``HistoryChangeView/forEachStoredProperty(_:)``.
///
/// ```swift
/// try change.forEachStoredProperty { property in print(property.name, property.isMembershipChange) }
/// ```
public struct StoredHistoryProperty {
    /// The attribute or relationship name.
    public let name: String
    /// The value before the change (updates and deletes), nil where none is recorded.
    public let before: StoredHistoryValue?
    /// The value after the change (inserts and updates), nil where none is recorded.
    public let after: StoredHistoryValue?
    /// The model excludes this attribute's values from history (both values are nil).
    public let isValueExcluded: Bool
    /// A to-many relationship's membership change (its object IDs are left out here; read
    /// them with ``HistoryChangeView/copy()``).
    public let isMembershipChange: Bool
}
