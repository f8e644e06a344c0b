import Foundation

/// A change as the recorder collects it, before encoding.
struct RecordedChange {
    struct Property {
        var name: String
        var before: AttributeValue?
        var after: AttributeValue?
        var excluded = false
        var membership: Membership?
    }

    struct Membership {
        var destination: String
        var added: [Int64]
        var removed: [Int64]
    }

    var type: PersistentHistoryChangeType
    var entity: String
    var primaryKey: Int64
    var properties: [Property]
    /// The other key of a key change (another program's `UPDATE t SET id = 7 WHERE id = 1`):
    /// on the insert at the new key, the key the object moved from; on the delete at the old
    /// key, the key it moved to. Nil for every other change.
    var movedKey: Int64?
    /// The values of the entity's declared key (``EntityDescription/declaredKey``), in key
    /// order: after an insert, before an update or a delete. Empty for entities without one.
    var key: [(name: String, value: AttributeValue)] = []
}
