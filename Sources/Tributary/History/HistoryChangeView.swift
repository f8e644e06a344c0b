import Foundation

/// One change read by a history cursor: its identity is at hand, its properties are
/// decoded from the transaction's payload only when ``forEachProperty(_:)`` reads them.
/// Valid only inside the closure given to
/// ``PersistentStoreCoordinator/enumerateHistoryChanges(_:_:)``; keep one with ``copy()``.
///
/// ```swift
/// try coordinator.enumerateHistoryChanges(.fetchHistory(after: token)) { change in
///     change.forEachProperty { name, before, after in print(name, before ?? .null, after ?? .null) }
/// }
/// ```
public struct HistoryChangeView {
    let payload: [UInt8]
    let names: [String]
    let propertiesOffset: Int
    let propertyCount: Int
    let storeID: UUID
    /// The transaction's token.
    public let token: PersistentHistoryToken
    /// When the transaction committed.
    public let timestamp: Date
    /// The transaction's author.
    public let author: String?
    /// The transaction's context name.
    public let contextName: String?
    /// Why the transaction was made (``TransactionMetadata/reason``).
    public let reason: String?
    /// The change's index in its transaction.
    public let index: Int
    /// Insert, update or delete.
    public let changeType: PersistentHistoryChangeType
    /// The entity changed.
    public let entityName: String
    /// The object's primary key.
    public let primaryKey: Int64
    /// The transaction's chain hash (SHA-256; see
    /// ``PersistentStoreCoordinator/verifyHistoryChain()``), the same for every change of the
    /// transaction: what a copy of the history (a pipeline's sink) records to vouch later that
    /// the store's history through this transaction was not rewritten. Nil when the store's
    /// history is not chained.
    public internal(set) var chainHash: [UInt8]?
    /// The other key of a key change (``movedFrom``, ``movedTo``).
    var movedKey: Int64?
    /// The row's key as its table declares it, when that is not the object's key
    /// (`PersistentHistoryChange.key`): the values of the entity's declared key attributes
    /// after an insert, before an update or a delete; empty for every other entity.
    ///
    /// ```swift
    /// if let email = change.key["email"] { print("\(change.changeType) of the user \(email)") }
    /// ```
    public internal(set) var key: [String: AttributeValue] = [:]

    /// The object changed.
    public var objectID: ObjectID { ObjectID(storeID: storeID, entityName: entityName, primaryKey: primaryKey) }

    /// For an insert that continues an object another program moved to a new primary key, the
    /// object's ID before (`PersistentHistoryChange.movedFrom`); nil otherwise.
    ///
    /// ```swift
    /// if let old = change.movedFrom { index.rekey(old, to: change.objectID) }
    /// ```
    public var movedFrom: ObjectID? { changeType == .insert ? movedObjectID : nil }

    /// For a delete of an object another program moved to a new primary key, the object's ID
    /// after (`PersistentHistoryChange.movedTo`); nil otherwise.
    public var movedTo: ObjectID? { changeType == .delete ? movedObjectID : nil }

    private var movedObjectID: ObjectID? {
        movedKey.map { ObjectID(storeID: storeID, entityName: entityName, primaryKey: $0) }
    }

    /// Calls `body` with each property's name and its values before and after
    /// (nil where they do not apply or are excluded from history). Membership changes
    /// of to-many relationships are skipped; ``copy()`` has them.
    public func forEachProperty(_ body: (_ name: String, _ before: AttributeValue?, _ after: AttributeValue?) throws -> Void) throws {
        var reader = ByteReader(bytes: payload, offset: propertiesOffset)
        for _ in 0..<propertyCount {
            let (name, flags) = try HistoryPayload.propertyHeader(&reader, names: names)
            let before = flags.contains(.before) ? try reader.value(storeID: storeID, names: names) : nil
            let after = flags.contains(.after) ? try reader.value(storeID: storeID, names: names) : nil
            if flags.contains(.membership) {
                try HistoryPayload.skipMembership(&reader)
                continue
            }
            try body(name, before, after)
        }
    }

    /// Calls `body` with each property read in place: values as stored, text and bytes
    /// pointing into the payload (valid only during the call). Nothing is copied, so this is
    /// the fastest way to transcode history; ``forEachProperty(_:)`` gives ``AttributeValue``s.
    ///
    /// ```swift
    /// try change.forEachStoredProperty { property in
    ///     if case .integer(let n)? = property.after { total += n }
    /// }
    /// ```
    public func forEachStoredProperty(_ body: (StoredHistoryProperty) throws -> Void) throws {
        try payload.withUnsafeBufferPointer { base in
            var reader = ByteReader(bytes: payload, offset: propertiesOffset)
            func value() throws -> StoredHistoryValue {
                typealias Tag = HistoryPayload.ValueTag
                guard let tag = Tag(rawValue: try reader.byte()) else { throw HistoryPayload.damaged() }
                switch tag {
                case .null: return .null
                case .integer: return .integer(try reader.signed())
                case .double: return .double(try reader.double())
                case .date: return .date(try reader.double())
                case .boolTrue: return .bool(true)
                case .boolFalse: return .bool(false)
                case .text, .blob:
                    let count = try reader.count()
                    let start = reader.offset
                    _ = try reader.take(count)
                    let bytes = UnsafeBufferPointer(rebasing: base[start..<(start + count)])
                    return tag == .text ? .text(bytes) : .blob(bytes)
                case .uuid, .objectID:
                    reader.offset -= 1
                    switch try reader.value(storeID: storeID, names: names) {
                    case .uuid(let u): return .uuid(u)
                    case .objectID(let id): return .objectID(entityName: id.entityName, primaryKey: id.primaryKey)
                    default: throw HistoryPayload.damaged()
                    }
                }
            }
            for _ in 0..<propertyCount {
                let (name, flags) = try HistoryPayload.propertyHeader(&reader, names: names)
                let before = flags.contains(.before) ? try value() : nil
                let after = flags.contains(.after) ? try value() : nil
                let membership = flags.contains(.membership)
                if membership { try HistoryPayload.skipMembership(&reader) }
                try body(StoredHistoryProperty(name: name, before: before, after: after, isValueExcluded: flags.contains(.excluded), isMembershipChange: membership))
            }
        }
    }

    /// The change as a value that outlives the cursor.
    public func copy() throws -> PersistentHistoryChange {
        var reader = ByteReader(bytes: payload, offset: propertiesOffset)
        let properties = try HistoryPayload.decodeProperties(&reader, count: propertyCount, names: names, storeID: storeID)
        return PersistentHistoryChange(token: token, index: index, changedObjectID: objectID, changeType: changeType, properties: properties, movedKey: movedKey, key: key)
    }
}
