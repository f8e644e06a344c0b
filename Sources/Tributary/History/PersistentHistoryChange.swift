/// Whether a change inserted, updated or deleted its object.
public enum PersistentHistoryChangeType: String, Sendable, Codable, CaseIterable {
    case insert
    case update
    case delete
}

/// One property of a history change: its value before and after, or, for a
/// to-many relationship, the object IDs added and removed.
///
/// `before` and `after` are nil where they do not apply (no `before` for an
/// insert, no `after` for a delete) and for attributes the model excludes from
/// history values, which still appear, with ``isValueExcluded`` set.
public struct PropertyChange: Sendable, Equatable {
    /// The attribute or relationship name.
    public let name: String
    /// The value before the change.
    public var before: AttributeValue?
    /// The value after the change.
    public var after: AttributeValue?
    /// The model excludes this attribute's values from history.
    public var isValueExcluded: Bool
    /// Membership changes, kept out of line: most properties have none, and an absent
    /// value costs nothing to copy.
    private var links: Links?

    struct Links: Sendable, Equatable {
        var added: [ObjectID]
        var removed: [ObjectID]
    }

    /// A property change.
    public init(name: String, before: AttributeValue? = nil, after: AttributeValue? = nil, added: [ObjectID] = [], removed: [ObjectID] = [], isValueExcluded: Bool = false) {
        self.name = name
        self.before = before
        self.after = after
        self.isValueExcluded = isValueExcluded
        self.links = added.isEmpty && removed.isEmpty ? nil : Links(added: added, removed: removed)
    }

    /// Object IDs added to a to-many relationship.
    public var added: [ObjectID] {
        get { links?.added ?? [] }
        set { links = Links(added: newValue, removed: links?.removed ?? []) }
    }

    /// Object IDs removed from a to-many relationship.
    public var removed: [ObjectID] {
        get { links?.removed ?? [] }
        set { links = Links(added: links?.added ?? [], removed: newValue) }
    }

    /// `true` for a to-many membership change.
    public var isMembershipChange: Bool { links.map { !$0.added.isEmpty || !$0.removed.isEmpty } ?? false }
}

/// One object's change within a history transaction (Core Data's `NSPersistentHistoryChange`),
/// with the values: every attribute after an insert, each updated property before
/// and after an update, every attribute's last value (a tombstone) for a delete.
///
/// ```swift
/// for change in transaction.changes where change.changeType == .update {
///     for property in change.updatedProperties {
///         print(property.name, property.before ?? .null, "→", property.after ?? .null)
///     }
/// }
/// ```
public struct PersistentHistoryChange: Sendable, Equatable {
    /// The transaction's token.
    public let token: PersistentHistoryToken
    /// The change's index within its transaction.
    public let index: Int
    /// The object changed.
    public let changedObjectID: ObjectID
    /// Insert, update or delete.
    public let changeType: PersistentHistoryChangeType
    /// The properties, in model order: all for inserts and deletes, the updated ones for updates.
    public let properties: [PropertyChange]
    /// The other key of a key change (``movedFrom``, ``movedTo``).
    var movedKey: Int64?
    /// The row's key as its table declares it, when that is not the object's key: the values
    /// of the entity's `EntityDescription.declaredKey` attributes (an adopted table's text key,
    /// composite key or `INT PRIMARY KEY`) after an insert, and before an update or a delete.
    /// An update that changed a key attribute still names the row by its old key here; the
    /// new value is among its ``updatedProperties``. Empty for every other entity (an
    /// `INTEGER PRIMARY KEY` is the object ID's key, ``changedObjectID``).
    ///
    /// ```swift
    /// // CREATE TABLE users(email TEXT PRIMARY KEY, name TEXT), adopted;
    /// // sqlite3: UPDATE users SET name = 'Ann' WHERE email = 'ann@example.com'
    /// change.key            // ["email": .string("ann@example.com")]
    /// change.changeType     // .update, properties: name only
    /// ```
    public internal(set) var key: [String: AttributeValue] = [:]

    /// A unique, ordered ID: the token's value and the index.
    public var changeID: String { "\(token.value).\(index)" }

    /// The entity's name.
    public var entityName: String { changedObjectID.entityName }

    /// For an insert that continues an object another program moved to a new primary key,
    /// the object's ID before the move; nil otherwise. The same transaction deletes that ID,
    /// and the delete's ``movedTo`` names this change's object.
    ///
    /// ```swift
    /// // sqlite3: UPDATE counters SET id = 7 WHERE id = 1
    /// for change in transaction.changes {
    ///     if let old = change.movedFrom { print("\(old) is now \(change.changedObjectID)") }   // counters/p1 is now counters/p7
    /// }
    /// ```
    public var movedFrom: ObjectID? { changeType == .insert ? movedObjectID : nil }

    /// For a delete of an object another program moved to a new primary key, the object's ID
    /// after the move; nil otherwise (the object is gone). The same transaction inserts that
    /// ID, and the insert's ``movedFrom`` names this change's object.
    ///
    /// ```swift
    /// if change.changeType == .delete, let new = change.movedTo { cache.rekey(change.changedObjectID, to: new) }
    /// ```
    public var movedTo: ObjectID? { changeType == .delete ? movedObjectID : nil }

    private var movedObjectID: ObjectID? {
        movedKey.map { ObjectID(storeID: changedObjectID.storeID, entityName: changedObjectID.entityName, primaryKey: $0) }
    }

    /// For updates, the properties that changed (Core Data's `updatedProperties`).
    public var updatedProperties: [PropertyChange] { changeType == .update ? properties : [] }

    /// For deletes, the last values (Core Data's `tombstone`).
    public var tombstone: [String: AttributeValue] {
        guard changeType == .delete else { return [:] }
        var values: [String: AttributeValue] = [:]
        for property in properties { if let value = property.before { values[property.name] = value } }
        return values
    }

    /// For inserts, the new values.
    public var insertedValues: [String: AttributeValue] {
        guard changeType == .insert else { return [:] }
        var values: [String: AttributeValue] = [:]
        for property in properties { if let value = property.after { values[property.name] = value } }
        return values
    }
}
