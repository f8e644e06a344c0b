/// What happens to related objects when an object is deleted.
public enum DeleteRule: String, Sendable, Codable, Hashable, CaseIterable {
    /// Related objects stay; their inverse no longer points at the deleted object.
    case nullify
    /// Related objects are deleted too.
    case cascade
    /// The delete fails while related objects exist.
    case deny
}

/// A relationship from one entity to another, with its inverse.
///
/// ```swift
/// Relationship("tags", to: "Tag", inverse: "posts", toMany: true)
/// Relationship("attachments", to: "Attachment", inverse: "post", toMany: true, deleteRule: .cascade)
/// ```
public struct RelationshipDescription: Sendable, Codable, Hashable {
    /// The relationship's name.
    public var name: String
    /// The entity it points to.
    public var destinationEntity: String
    /// The inverse relationship's name on the destination.
    public var inverseName: String
    /// To-many when `true`, to-one otherwise.
    public var isToMany: Bool
    /// What deleting the source does to the destination.
    public var deleteRule: DeleteRule
    /// Whether a to-one relationship may be nil.
    public var isOptional: Bool
    /// The relationship's name in an older model (Core Data's `renamingIdentifier`, `renamedFrom:`
    /// in a model file): an explicit migration renames its column or join table, keeping the links.
    public var renamingIdentifier: String?

    /// A relationship description.
    public init(name: String, destinationEntity: String, inverseName: String, isToMany: Bool = false, deleteRule: DeleteRule = .nullify, isOptional: Bool = true) {
        self.name = name
        self.destinationEntity = destinationEntity
        self.inverseName = inverseName
        self.isToMany = isToMany
        self.deleteRule = deleteRule
        self.isOptional = isOptional
    }

    enum CodingKeys: String, CodingKey {
        case name, destinationEntity = "destination", inverseName = "inverse", isToMany = "toMany", deleteRule, isOptional = "optional"
        case renamingIdentifier = "renamedFrom"
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        destinationEntity = try c.decode(String.self, forKey: .destinationEntity)
        inverseName = try c.decode(String.self, forKey: .inverseName)
        isToMany = try c.decodeIfPresent(Bool.self, forKey: .isToMany) ?? false
        deleteRule = try c.decodeIfPresent(DeleteRule.self, forKey: .deleteRule) ?? .nullify
        isOptional = try c.decodeIfPresent(Bool.self, forKey: .isOptional) ?? true
        renamingIdentifier = try c.decodeIfPresent(String.self, forKey: .renamingIdentifier)
    }
}
