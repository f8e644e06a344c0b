import Foundation

/// The current row of a fetch cursor: values are read from SQLite when asked for,
/// nothing is built for columns not read. Valid only inside the closure given to
/// ``PersistentStoreCoordinator/enumerateRows(_:_:)``; keep a row with ``copy()``.
///
/// ```swift
/// try coordinator.enumerateRows(FetchRequest(entityName: "Post")) { row in
///     if case .string(let title)? = row["title"] { titles.append(title) }
/// }
/// ```
public struct FetchedRowView {
    let statement: Statement
    let query: FetchQuery
    let storeID: UUID

    /// The row's primary key.
    public var primaryKey: Int64 { statement.int64(at: 0) }

    /// The row's object ID.
    public var objectID: ObjectID { ObjectID(storeID: storeID, entityName: query.entityName, primaryKey: primaryKey) }

    /// The property names, in model order.
    public var keys: [String] { query.layout.names }

    /// The value of the `position`-th property (the order of ``keys``).
    public subscript(position position: Int) -> AttributeValue {
        query.value(of: statement, column: position, storeID: storeID)
    }

    /// The value of `key`, or nil when the row has no such property.
    public subscript(key: String) -> AttributeValue? {
        guard let i = query.layout.index[key] else { return nil }
        return self[position: i]
    }

    /// A row that outlives the cursor.
    public func copy() -> FetchedRow {
        let values = (0..<keys.count).map { self[position: $0] }
        return RowBatch(layout: query.layout, storeID: storeID, entityName: query.entityName, keys: [primaryKey], values: values).rows[0]
    }
}
