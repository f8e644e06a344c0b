/// An attribute of an entity: a name, a type, whether it may be nil, and a default.
///
/// ```swift
/// Attribute("title", .string, optional: false)
/// Attribute("color", .string, default: "gray")
/// Attribute("password", .string).excludedFromHistory()
/// DerivedAttributeDescription("postCount", .integer, derivation: "posts.@count")
/// ```
public struct AttributeDescription: Sendable, Codable, Hashable {
    /// The attribute's name, also its column name.
    public var name: String
    /// Its type.
    public var type: AttributeType
    /// Whether the value may be nil. Core Data's default, `true`.
    public var isOptional: Bool
    /// The value used when an insert gives none.
    public var defaultValue: AttributeValue?
    /// When `true`, history records that the attribute changed but not its values
    /// (for large binary data or secrets).
    public var isExcludedFromHistory: Bool
    /// For a derived attribute, how the store computes it (see ``Derivation``);
    /// nil for a stored attribute. Derived attributes are read-only for writers.
    public var derivation: Derivation?
    /// The attribute's name in an older model (Core Data's `renamingIdentifier`, `renamedFrom:`
    /// in a model file): an explicit migration (``PersistentStoreCoordinator/migrateStore(at:to:dryRun:busyTimeout:)``)
    /// renames that column to ``name``, keeping its values. Ignored when the older model has no
    /// such attribute or already has one named ``name``; nil for most attributes.
    public var renamingIdentifier: String?

    /// Whether the store maintains the value itself.
    public var isDerived: Bool { derivation != nil }

    /// Whether a batch insert binds this attribute's value: every stored attribute, and
    /// `now()` (the insert's time, as SQLite's column default would give it). Other derived
    /// attributes take their column defaults and triggers.
    var isBoundByInserts: Bool { derivation == nil || derivation == .now }

    /// An attribute description.
    public init(name: String, type: AttributeType, isOptional: Bool = true, defaultValue: AttributeValue? = nil, isExcludedFromHistory: Bool = false, derivation: Derivation? = nil) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.defaultValue = defaultValue
        self.isExcludedFromHistory = isExcludedFromHistory
        self.derivation = derivation
    }

    enum CodingKeys: String, CodingKey {
        case name, type, isOptional = "optional", defaultValue = "default", isExcludedFromHistory = "excludedFromHistory", derivation = "derived"
        case renamingIdentifier = "renamedFrom"
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        type = try c.decode(AttributeType.self, forKey: .type)
        isOptional = try c.decodeIfPresent(Bool.self, forKey: .isOptional) ?? true
        isExcludedFromHistory = try c.decodeIfPresent(Bool.self, forKey: .isExcludedFromHistory) ?? false
        derivation = try c.decodeIfPresent(Derivation.self, forKey: .derivation)
        renamingIdentifier = try c.decodeIfPresent(String.self, forKey: .renamingIdentifier)
        if let text = try c.decodeIfPresent(String.self, forKey: .defaultValue) {
            defaultValue = try AttributeValue.parse(text, as: type)
        } else {
            defaultValue = nil
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(type, forKey: .type)
        try c.encode(isOptional, forKey: .isOptional)
        if isExcludedFromHistory { try c.encode(true, forKey: .isExcludedFromHistory) }
        if let derivation { try c.encode(derivation, forKey: .derivation) }
        if let defaultValue { try c.encode(defaultValue.storedText, forKey: .defaultValue) }
        // Only when set, so that the canonical JSON (and version hash) of other models stays as it was.
        if let renamingIdentifier { try c.encode(renamingIdentifier, forKey: .renamingIdentifier) }
    }
}
