import Foundation

/// One object of a consistent snapshot: its values as an insert would record them.
///
/// ```swift
/// try coordinator.enumerateSnapshot { token in print("as of", token) } objects: { object in
///     print(object.objectID, object.properties.map(\.name))
/// }
/// ```
public struct SnapshotObject: Sendable, Equatable {
    /// The object.
    public let objectID: ObjectID
    /// Every attribute and to-one relationship (as `after`, the model's history exclusions
    /// marked with ``PropertyChange/isValueExcluded``), then the links of each many-to-many
    /// relationship this entity's side owns (as ``PropertyChange/added``).
    public let properties: [PropertyChange]
    /// The row's key as its table declares it, when that is not the object's key: the values
    /// of the entity's ``EntityDescription/declaredKey`` attributes, as an insert of the row
    /// carries them (`PersistentHistoryChange.key`); empty for every other entity.
    ///
    /// ```swift
    /// // CREATE TABLE users(email TEXT PRIMARY KEY, name TEXT), adopted:
    /// object.key   // ["email": .string("ann@example.com")]
    /// ```
    public let key: [String: AttributeValue]
}

extension PersistentStoreCoordinator {
    /// Reads every row of the store (or of `entities`) and the current history token (0 when
    /// the store does not track history) inside one read transaction, so the rows are exactly
    /// the state at that token: a stream that
    /// starts with this snapshot and continues with the history after the token loses nothing.
    /// Rows stream one at a time in primary-key order, entity by entity, in bounded memory.
    ///
    /// ```swift
    /// var token: PersistentHistoryToken?
    /// try coordinator.enumerateSnapshot(begin: { token = $0 }) { object in write(object) }
    /// // then: history after token
    /// ```
    public func enumerateSnapshot(entities: [String] = [], begin: (PersistentHistoryToken) throws -> Void, _ body: (SnapshotObject) throws -> Void) throws {
        let store = try requireStore()
        let schema = store.schema
        let names = entities.isEmpty ? store.model.entities.map(\.name) : entities
        let tables = try names.map { try schema.table($0) }
        let storeID = store.identifier
        try store.database.read { db in
            let newest = store.isHistoryTracked ? try db.scalar(HistorySchema.newestTokenSQL)?.integerValue ?? 0 : 0
            try begin(PersistentHistoryToken(value: newest, storeID: storeID))
            for table in tables {
                let query = try FetchQuery(FetchRequest(entityName: table.name), schema: schema)
                let rows = try db.makeStatement(query.sql)
                try rows.bind(query.arguments)
                let excluded = Set(table.attributes.filter(\.isExcludedFromHistory).map(\.name))
                // The many-to-many links this side owns, each read in source order and merged with the rows.
                var links: [(name: String, destination: String, statement: Statement, hasRow: Bool)] = []
                for relationship in table.entity.relationships {
                    guard case .joinTable(let joinTable, "src", _) = table.storage[relationship.name]! else { continue }
                    let statement = try db.makeStatement("SELECT \"src\", \"dst\" FROM \(quote(joinTable)) ORDER BY \"src\", \"dst\"")
                    links.append((relationship.name, relationship.destinationEntity, statement, try statement.step()))
                }
                let keys = query.layout.names
                let keyColumns = table.entity.declaredKey.compactMap { name in keys.firstIndex(of: name).map { (name: name, column: $0) } }
                while try rows.step() {
                    let key = rows.int64(at: 0)
                    var properties: [PropertyChange] = []
                    properties.reserveCapacity(keys.count + links.count)
                    for (i, name) in keys.enumerated() {
                        if excluded.contains(name) {
                            properties.append(PropertyChange(name: name, isValueExcluded: true))
                        } else {
                            properties.append(PropertyChange(name: name, after: query.value(of: rows, column: i, storeID: storeID)))
                        }
                    }
                    for l in links.indices {
                        var added: [ObjectID] = []
                        while links[l].hasRow, links[l].statement.int64(at: 0) <= key {
                            if links[l].statement.int64(at: 0) == key {
                                added.append(ObjectID(storeID: storeID, entityName: links[l].destination, primaryKey: links[l].statement.int64(at: 1)))
                            }
                            links[l].hasRow = try links[l].statement.step()
                        }
                        if !added.isEmpty { properties.append(PropertyChange(name: links[l].name, added: added)) }
                    }
                    let declared = Dictionary(uniqueKeysWithValues: keyColumns.map { ($0.name, query.value(of: rows, column: $0.column, storeID: storeID)) })
                    try body(SnapshotObject(objectID: ObjectID(storeID: storeID, entityName: table.name, primaryKey: key), properties: properties, key: declared))
                }
            }
        }
    }
}
