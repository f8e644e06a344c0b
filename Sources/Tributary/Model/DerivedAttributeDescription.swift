/// A derived attribute in the model DSL (Core Data's `NSDerivedAttributeDescription`):
/// an attribute whose value the store computes from other values, in the same
/// transaction as every write it depends on, whatever the write path. Writers
/// cannot set it. See ``Derivation`` for the expressions.
///
/// ```swift
/// Entity("Tag") {
///     Attribute("name", .string, optional: false).unique()
///     DerivedAttributeDescription("postCount", .integer, derivation: "posts.@count")
///     DerivedAttributeDescription("searchName", .string, derivation: "canonical:(name)")
///     Relationship("posts", to: "Post", inverse: "tags", toMany: true)
/// }
/// ```
public struct DerivedAttributeDescription: EntityComponent {
    /// The attribute as the model holds it (its ``AttributeDescription/derivation`` set).
    public let attribute: AttributeDescription

    /// A derived attribute from the text of its expression. A malformed expression
    /// makes the model's initialiser throw ``TributaryError/Code/invalidModel``.
    public init(_ name: String, _ type: AttributeType, derivation: String) {
        // Kept as a one-name copy path when it does not parse; validation parses it
        // again and throws the precise error.
        let parsed = (try? Derivation(parsing: derivation)) ?? .copy(path: [derivation])
        self.init(name, type, derivation: parsed)
    }

    /// A derived attribute from a parsed expression.
    ///
    /// ```swift
    /// DerivedAttributeDescription("updatedAt", .date, derivation: .now)
    /// ```
    public init(_ name: String, _ type: AttributeType, derivation: Derivation) {
        attribute = AttributeDescription(name: name, type: type, derivation: derivation)
    }

    public func apply(to entity: inout EntityDescription) {
        entity.attributes.append(attribute)
    }
}
