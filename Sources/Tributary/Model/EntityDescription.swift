/// An entity: a named kind of object with attributes, relationships,
/// uniqueness constraints and indexes. Stored as one table.
///
/// ```swift
/// Entity("Tag") {
///     Attribute("name", .string, optional: false)
///     Attribute("color", .string)
///     Relationship("posts", to: "Post", inverse: "tags", toMany: true)
///     Unique("name")
/// }
/// ```
public struct EntityDescription: Sendable, Codable, Hashable {
    /// The entity's name, also its table name.
    public var name: String
    /// Attributes in column order.
    public var attributes: [AttributeDescription]
    /// Relationships in declaration order.
    public var relationships: [RelationshipDescription]
    /// Each constraint is a list of attribute names whose combination is unique.
    public var uniquenessConstraints: [[String]]
    /// Each index is a list of attribute or to-one relationship names.
    public var indexes: [[String]]
    /// The ``ManagedObject`` subclass of the entity's objects (Core Data's `managedObjectClassName`);
    /// nil for ``ManagedObject`` itself. Contexts of a coordinator made with the model make
    /// objects of this class. Not part of the model's value: not stored, compared or hashed.
    ///
    /// ```swift
    /// Entity(Quake.self) { Attribute("magnitude", .double) }     // sets it
    /// try model.registerSubclass(Quake.self)                      // or, for a YAML model
    /// ```
    public var managedObjectClass: ManagedObject.Type? {
        get { objectClass.type }
        set { objectClass = EntityClass(type: newValue) }
    }
    var objectClass = EntityClass(type: nil)
    /// The column that identifies the rows of a table Tributary did not create (an adopted
    /// database's table): its `INTEGER PRIMARY KEY` column, or `rowid` when it has none.
    /// Nil for the tables Tributary creates, keyed by `_pk` and versioned by `_version`;
    /// an adopted table has no version column.
    public var tableKey: String?
    /// The key an adopted table declares when it does not identify its rows (a text key, a
    /// composite key, an `INT PRIMARY KEY` that is not an alias of the rowid): its attributes,
    /// in key order. The rows are keyed by their rowid (``tableKey``), and every history change
    /// of the entity carries these attributes' values (`PersistentHistoryChange.key`). Empty
    /// when the object's key is the declared key itself (an `INTEGER PRIMARY KEY`), when the
    /// table declares none, and for the tables Tributary creates.
    ///
    /// ```swift
    /// // CREATE TABLE users(email TEXT PRIMARY KEY, name TEXT), adopted:
    /// model.entity(named: "users")?.declaredKey   // ["email"]
    /// ```
    public var declaredKey: [String] = []
    /// Whether an adopted table is a `WITHOUT ROWID` table. Its rows have no rowid, so
    /// Tributary numbers them in a table of its own (`_tributary_keys_<table>`, one row per
    /// declared key, kept across `VACUUM`): those numbers are the object IDs (``tableKey``
    /// names them), and ``declaredKey`` is the table's `PRIMARY KEY`. Other programs write
    /// such a table; Tributary reads it, records its changes and refuses to write it.
    public var isWithoutRowid = false
    /// The entity's name in an older model (Core Data's `renamingIdentifier`, `renamedFrom:`
    /// in a model file): an explicit migration renames that table to ``name``, keeping its rows
    /// and their object IDs' primary keys. Ignored when the older model has no such entity or
    /// already has one named ``name``.
    ///
    /// ```swift
    /// Entity("Article") { Attribute("title", .string) }.renamed(from: "Post")
    /// ```
    public var renamingIdentifier: String?

    /// An entity description.
    public init(name: String, attributes: [AttributeDescription] = [], relationships: [RelationshipDescription] = [], uniquenessConstraints: [[String]] = [], indexes: [[String]] = []) {
        self.name = name
        self.attributes = attributes
        self.relationships = relationships
        self.uniquenessConstraints = uniquenessConstraints
        self.indexes = indexes
    }

    enum CodingKeys: String, CodingKey { case name, attributes, relationships, uniquenessConstraints = "unique", indexes, tableKey, declaredKey, isWithoutRowid = "withoutRowid", renamingIdentifier = "renamedFrom" }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        attributes = try c.decodeIfPresent([AttributeDescription].self, forKey: .attributes) ?? []
        relationships = try c.decodeIfPresent([RelationshipDescription].self, forKey: .relationships) ?? []
        uniquenessConstraints = try c.decodeIfPresent([[String]].self, forKey: .uniquenessConstraints) ?? []
        indexes = try c.decodeIfPresent([[String]].self, forKey: .indexes) ?? []
        tableKey = try c.decodeIfPresent(String.self, forKey: .tableKey)
        declaredKey = try c.decodeIfPresent([String].self, forKey: .declaredKey) ?? []
        isWithoutRowid = try c.decodeIfPresent(Bool.self, forKey: .isWithoutRowid) ?? false
        renamingIdentifier = try c.decodeIfPresent(String.self, forKey: .renamingIdentifier)
    }

    /// Encodes what the synthesized form did, and ``declaredKey`` and ``isWithoutRowid`` only when there is one: a
    /// model without one keeps its canonical JSON, and so its version hash.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(attributes, forKey: .attributes)
        try c.encode(relationships, forKey: .relationships)
        try c.encode(uniquenessConstraints, forKey: .uniquenessConstraints)
        try c.encode(indexes, forKey: .indexes)
        try c.encodeIfPresent(tableKey, forKey: .tableKey)
        if !declaredKey.isEmpty { try c.encode(declaredKey, forKey: .declaredKey) }
        if isWithoutRowid { try c.encode(true, forKey: .isWithoutRowid) }
        try c.encodeIfPresent(renamingIdentifier, forKey: .renamingIdentifier)
    }

    /// The attribute named `name`.
    public func attribute(named name: String) -> AttributeDescription? {
        attributes.first { $0.name == name }
    }

    /// The relationship named `name`.
    public func relationship(named name: String) -> RelationshipDescription? {
        relationships.first { $0.name == name }
    }

    /// Names of every attribute and relationship.
    public var propertyNames: [String] { attributes.map(\.name) + relationships.map(\.name) }
}
