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
}
