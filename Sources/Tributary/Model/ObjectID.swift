import Foundation

/// The identity of one row of one entity in one store.
///
/// Its URI form is stable: `tributary://<store-uuid>/<Entity>/p<primary-key>`.
///
/// ```swift
/// let id = ObjectID(storeID: store, entityName: "Post", primaryKey: 42)
/// id.uriRepresentation                       // "tributary://…/Post/p42"
/// ObjectID(uriRepresentation: id.uriRepresentation) == id   // true
/// ```
public struct ObjectID: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The store the row lives in.
    public let storeID: UUID
    /// The entity's name.
    public let entityName: String
    /// The row's primary key (SQLite rowid).
    public let primaryKey: Int64

    /// An object ID from its parts.
    public init(storeID: UUID, entityName: String, primaryKey: Int64) {
        self.storeID = storeID
        self.entityName = entityName
        self.primaryKey = primaryKey
    }

    /// Whether the ID is a new object's, not saved yet: it changes when its context saves.
    public var isTemporaryID: Bool { primaryKey < 0 }

    /// The stable URI form.
    public var uriRepresentation: String {
        "tributary://" + storeID.lowercasedString + "/" + entityName + "/p" + String(primaryKey)
    }

    /// Parses the URI form; nil when the text is not one.
    public init?(uriRepresentation text: String) {
        let prefix = "tributary://"
        guard text.hasPrefix(prefix) else { return nil }
        let parts = text.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3,
              let store = UUID(uuidString: String(parts[0])),
              !parts[1].isEmpty,
              parts[2].first == "p",
              let key = Int64(parts[2].dropFirst())
        else { return nil }
        self.init(storeID: store, entityName: String(parts[1]), primaryKey: key)
    }

    public var description: String { uriRepresentation }

    /// Hashes the key and the entity name's length only: the IDs a program holds
    /// mostly share a store, and contexts hash many of them per save.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(primaryKey)
        hasher.combine(entityName.utf8.count)
    }

    public static func < (lhs: ObjectID, rhs: ObjectID) -> Bool {
        (lhs.entityName, lhs.primaryKey) < (rhs.entityName, rhs.primaryKey)
    }

    public init(from decoder: Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let id = ObjectID(uriRepresentation: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not an object ID URI: \(text)"))
        }
        self = id
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(uriRepresentation)
    }
}
