import Foundation

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

/// One batch of fetched rows: their keys and all their values in one flat buffer,
/// so that fetching allocates per batch, not per row.
final class RowBatch: Sendable {
    let layout: RowLayout
    let storeID: UUID
    let entityName: String
    let keys: [Int64]
    let values: [AttributeValue]

    init(layout: RowLayout, storeID: UUID, entityName: String, keys: [Int64], values: [AttributeValue]) {
        self.layout = layout
        self.storeID = storeID
        self.entityName = entityName
        self.keys = keys
        self.values = values
    }

    /// The batch's rows.
    var rows: [FetchedRow] { keys.indices.map { FetchedRow(batch: self, index: $0) } }
}

/// One row of a dictionary fetch: the object's ID and its values by property name.
///
/// ```swift
/// for row in try coordinator.fetch(request) {
///     print(row.objectID, row["title"] ?? .null)
/// }
/// ```
public struct FetchedRow: Sendable {
    let batch: RowBatch
    let index: Int

    /// The row's object ID. Rows of a grouped, distinct or aggregate fetch
    /// (``FetchRequest/propertiesToGroupBy``, ``FetchRequest/returnsDistinctResults``, `@count`…)
    /// stand for no one object: their ID has primary key 0, which no object has.
    public var objectID: ObjectID {
        ObjectID(storeID: batch.storeID, entityName: batch.entityName, primaryKey: batch.keys[index])
    }

    /// The property names, in model order.
    public var keys: [String] { batch.layout.names }

    /// The values, in the order of ``keys``.
    public var values: [AttributeValue] {
        let width = batch.layout.names.count
        return Array(batch.values[index * width..<(index + 1) * width])
    }

    /// The value of `key`, or nil when the row has no such property.
    public subscript(key: String) -> AttributeValue? {
        guard let i = batch.layout.index[key] else { return nil }
        return batch.values[index * batch.layout.names.count + i]
    }

    /// The value of the `position`-th property (the order of ``keys``).
    public subscript(position position: Int) -> AttributeValue {
        batch.values[index * batch.layout.names.count + position]
    }

    /// The values by property name.
    public var dictionary: [String: AttributeValue] {
        Dictionary(uniqueKeysWithValues: zip(keys, values))
    }
}
