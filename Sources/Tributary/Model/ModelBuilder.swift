/// A part of an entity in the model DSL: ``Attribute``, ``Relationship``, ``Unique`` or ``FetchIndex``.
public protocol EntityComponent: Sendable {
    /// Adds this part to the entity being built.
    func apply(to entity: inout EntityDescription)
}

/// Builds an entity's parts.
@resultBuilder
public enum EntityBuilder {
    public static func buildExpression(_ component: some EntityComponent) -> [any EntityComponent] { [component] }
    public static func buildBlock(_ parts: [any EntityComponent]...) -> [any EntityComponent] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [any EntityComponent]?) -> [any EntityComponent] { part ?? [] }
    public static func buildEither(first: [any EntityComponent]) -> [any EntityComponent] { first }
    public static func buildEither(second: [any EntityComponent]) -> [any EntityComponent] { second }
    public static func buildArray(_ parts: [[any EntityComponent]]) -> [any EntityComponent] { parts.flatMap { $0 } }
}

/// Builds a model's entities.
@resultBuilder
public enum ModelBuilder {
    public static func buildExpression(_ entity: Entity) -> [EntityDescription] { [entity.description] }
    public static func buildExpression(_ entity: EntityDescription) -> [EntityDescription] { [entity] }
    public static func buildBlock(_ parts: [EntityDescription]...) -> [EntityDescription] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [EntityDescription]?) -> [EntityDescription] { part ?? [] }
    public static func buildEither(first: [EntityDescription]) -> [EntityDescription] { first }
    public static func buildEither(second: [EntityDescription]) -> [EntityDescription] { second }
    public static func buildArray(_ parts: [[EntityDescription]]) -> [EntityDescription] { parts.flatMap { $0 } }
}

extension ManagedObjectModel {
    /// A model written with the DSL; validated, so a dangling inverse or a
    /// duplicate name throws ``TributaryError/Code/invalidModel``.
    ///
    /// ```swift
    /// let model = try ManagedObjectModel {
    ///     Entity("Note") { Attribute("text", .string) }
    /// }
    /// ```
    public init(@ModelBuilder _ entities: () -> [EntityDescription]) throws {
        try self.init(entities: entities())
    }
}

/// An entity in the model DSL.
///
/// ```swift
/// Entity("Tag") {
///     Attribute("name", .string, optional: false)
///     Unique("name")
/// }
/// ```
public struct Entity: Sendable {
    /// The entity built so far.
    public let description: EntityDescription

    /// An entity and its parts.
    public init(_ name: String, @EntityBuilder _ parts: () -> [any EntityComponent]) {
        var entity = EntityDescription(name: name)
        for part in parts() { part.apply(to: &entity) }
        description = entity
    }

    /// An entity named after an ``EntityNamed`` class, whose objects contexts make as that
    /// class (Core Data's entity class in the model), so `as? Quake` always holds.
    ///
    /// ```swift
    /// final class Quake: ManagedObject, EntityNamed, @unchecked Sendable {
    ///     static let entityName = "Quake"
    ///     @Managed("magnitude") var magnitude: Double
    /// }
    /// let model = try ManagedObjectModel {
    ///     Entity(Quake.self) { Attribute("magnitude", .double, optional: false, default: 0) }
    /// }
    /// ```
    public init<T: EntityNamed>(_ type: T.Type, @EntityBuilder _ parts: () -> [any EntityComponent]) {
        var entity = EntityDescription(name: T.entityName)
        for part in parts() { part.apply(to: &entity) }
        entity.managedObjectClass = type
        description = entity
    }

    private init(description: EntityDescription) { self.description = description }

    /// The entity was called `oldName` in an older model: an explicit migration renames its
    /// table (``EntityDescription/renamingIdentifier``).
    ///
    /// ```swift
    /// Entity("Article") { Attribute("title", .string) }.renamed(from: "Post")
    /// ```
    public func renamed(from oldName: String) -> Entity {
        var copy = description
        copy.renamingIdentifier = oldName
        return Entity(description: copy)
    }
}

/// An attribute in the model DSL.
///
/// ```swift
/// Attribute("externalID", .string, optional: false).unique()
/// Attribute("secret", .string).excludedFromHistory()
/// ```
public struct Attribute: EntityComponent {
    var attribute: AttributeDescription
    var isUnique = false

    /// An attribute: optional unless told otherwise, with an optional default.
    public init(_ name: String, _ type: AttributeType, optional: Bool = true, default defaultValue: AttributeValue? = nil) {
        attribute = AttributeDescription(name: name, type: type, isOptional: optional, defaultValue: defaultValue)
    }

    /// The attribute alone is unique (a one-attribute uniqueness constraint).
    public func unique() -> Attribute {
        var copy = self
        copy.isUnique = true
        return copy
    }

    /// History records that the attribute changed but not its values.
    public func excludedFromHistory() -> Attribute {
        var copy = self
        copy.attribute.isExcludedFromHistory = true
        return copy
    }

    /// The attribute was called `oldName` in an older model: an explicit migration renames
    /// its column (``AttributeDescription/renamingIdentifier``).
    ///
    /// ```swift
    /// Attribute("content", .string).renamed(from: "body")
    /// ```
    public func renamed(from oldName: String) -> Attribute {
        var copy = self
        copy.attribute.renamingIdentifier = oldName
        return copy
    }

    public func apply(to entity: inout EntityDescription) {
        entity.attributes.append(attribute)
        if isUnique { entity.uniquenessConstraints.append([attribute.name]) }
    }
}

/// A relationship in the model DSL; every relationship names its inverse.
///
/// ```swift
/// Relationship("post", to: "Post", inverse: "attachments")
/// Relationship("attachments", to: "Attachment", inverse: "post", toMany: true, deleteRule: .cascade)
/// ```
public struct Relationship: EntityComponent {
    var relationship: RelationshipDescription

    /// A relationship to `destination` whose inverse there is `inverse`.
    public init(_ name: String, to destination: String, inverse: String, toMany: Bool = false, deleteRule: DeleteRule = .nullify, optional: Bool = true) {
        relationship = RelationshipDescription(name: name, destinationEntity: destination, inverseName: inverse, isToMany: toMany, deleteRule: deleteRule, isOptional: optional)
    }

    /// The relationship was called `oldName` in an older model: an explicit migration renames
    /// its column or join table (``RelationshipDescription/renamingIdentifier``).
    ///
    /// ```swift
    /// Relationship("labels", to: "Tag", inverse: "posts", toMany: true).renamed(from: "tags")
    /// ```
    public func renamed(from oldName: String) -> Relationship {
        var copy = self
        copy.relationship.renamingIdentifier = oldName
        return copy
    }

    public func apply(to entity: inout EntityDescription) {
        entity.relationships.append(relationship)
    }
}

/// A composite uniqueness constraint in the model DSL.
///
/// ```swift
/// Unique("author", "slug")
/// ```
public struct Unique: EntityComponent {
    let names: [String]

    /// The combination of these attributes is unique.
    public init(_ names: String...) { self.names = names }

    public func apply(to entity: inout EntityDescription) {
        entity.uniquenessConstraints.append(names)
    }
}

/// An index in the model DSL (Core Data's fetch index).
///
/// ```swift
/// FetchIndex("createdAt")
/// ```
public struct FetchIndex: EntityComponent {
    let names: [String]

    /// An index over these attributes, in order.
    public init(_ names: String...) { self.names = names }

    public func apply(to entity: inout EntityDescription) {
        entity.indexes.append(names)
    }
}
