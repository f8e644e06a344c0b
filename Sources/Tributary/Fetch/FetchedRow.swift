/// The names of a fetch's columns, shared by all its rows.
final class RowLayout: Sendable {
    let names: [String]
    let index: [String: Int]

    init(names: [String]) {
        self.names = names
        var index: [String: Int] = [:]
        for (i, name) in names.enumerated() { index[name] = i }
        self.index = index
    }
}

/// One row of a dictionary fetch: the object's ID and its values by property name.
///
/// ```swift
/// for row in try coordinator.fetch(request) {
///     print(row.objectID, row["title"] ?? .null)
/// }
/// ```
public struct FetchedRow: Sendable {
    /// The row's object ID.
    public let objectID: ObjectID
    let layout: RowLayout
    /// The values, in the order of ``keys``.
    public let values: [AttributeValue]

    /// The property names, in model order.
    public var keys: [String] { layout.names }

    /// The value of `key`, or nil when the row has no such property.
    public subscript(key: String) -> AttributeValue? {
        guard let i = layout.index[key] else { return nil }
        return values[i]
    }

    /// The values by property name.
    public var dictionary: [String: AttributeValue] {
        Dictionary(uniqueKeysWithValues: zip(layout.names, values))
    }
}
