import Foundation
import Tributary
import TributaryPipeline

/// How a store's model is mirrored in PostgreSQL: one table per entity (`_pk bigint primary
/// key` holding the object's primary key, one column per attribute, one `bigint` column per
/// to-one relationship whose key the entity's SQLite table holds, and the model's indexes), one join table
/// `<table>_<relationship>` (`src`, `dst`) per many-to-many relationship on the side that owns
/// it in SQLite, the model's uniqueness constraints as deferrable unique constraints, and
/// the checkpoint table `tributary_checkpoints` (per pipeline: the source store, the position,
/// and in `chain_token` and `chain_hash` the token and chain hash, in hex, of the newest
/// transaction mirrored whole). Foreign-key columns carry no `REFERENCES`
/// constraint: a pipeline may filter out the target entity or start after its rows were made.
///
/// ```swift
/// let schema = PostgresMirrorSchema(model: store.model, schema: "public", tables: ["Post": "posts"])
/// for statement in schema.createStatements() { print(statement) }
/// ```
public struct PostgresMirrorSchema: Sendable {
    /// One mirrored entity.
    public struct Table: Sendable {
        /// The entity.
        public var entity: EntityDescription
        /// The PostgreSQL table's name (unqualified).
        public var name: String
        /// The data columns and their PostgreSQL types, in model order (attributes, then to-one keys).
        public var columns: [(name: String, type: String)]
        /// The many-to-many relationships whose join table this side owns, by relationship name: the join table's name.
        public var joinTables: [String: String]
        /// Every many-to-many relationship of the entity, by name: its join table, and whether this entity's key is in `src`.
        public var links: [String: (table: String, isSource: Bool)] = [:]
        /// The primary-key column: an adopted table's own key column (`id`), else ``PostgresMirrorSchema/keyColumn``.
        public var keyColumn: String = PostgresMirrorSchema.keyColumn
        /// Whether the table takes any property as a column: an existing table named by records
        /// a rename transform gave a name the model does not know.
        public var takesAnyColumn = false

        /// Whether the table has a column for property `name`.
        public func hasColumn(_ name: String) -> Bool { takesAnyColumn || columns.contains { $0.name == name } }
    }

    /// One join table: the entities whose keys its `src` and `dst` columns hold.
    public struct JoinTable: Sendable {
        /// The table's name (unqualified).
        public var name: String
        /// The entity of `src`.
        public var sourceEntity: String
        /// The entity of `dst`.
        public var destinationEntity: String
    }

    /// The name of the checkpoint table.
    public static let checkpointTable = "tributary_checkpoints"
    /// The primary-key column of mirror tables, but those of adopted tables keyed by a
    /// column of their own, which keep its name (``Table/keyColumn``).
    public static let keyColumn = "_pk"

    /// The key column an entity's mirror table takes: an adopted table's `INTEGER PRIMARY
    /// KEY` column keeps its name; a table keyed by its rowid, or made by Tributary, has `_pk`.
    static func keyColumn(of entity: EntityDescription) -> String {
        guard let key = entity.tableKey, !RowidName.contains(key) else { return keyColumn }
        return key
    }

    /// The key column of the table named `table` (by entity or table name).
    func keyColumn(ofTable table: String) -> String { tablesByName[table]?.keyColumn ?? Self.keyColumn }

    /// The schema (namespace) holding the tables.
    public let schema: String
    /// The tables by entity name.
    public let tables: [String: Table]
    /// Every join table.
    public let joinTables: [JoinTable]
    /// Table names by the names records may carry: entity names and, for records renamed by a
    /// transform, the table names themselves.
    private let tablesByName: [String: Table]

    /// The mirror of `model` in `schema`, with `tables` naming the table of an entity (default: the entity's name).
    public init(model: ManagedObjectModel, schema: String = "public", tables names: [String: String] = [:]) {
        self.schema = schema
        var tables: [String: Table] = [:]
        for entity in model.entities {
            let tableName = names[entity.name] ?? entity.name
            var columns = entity.attributes.map { ($0.name, Self.columnType($0.type)) }
            var joinTables: [String: String] = [:]
            for relationship in entity.relationships {
                guard let destination = model.entity(named: relationship.destinationEntity),
                      let inverse = destination.relationship(named: relationship.inverseName) else { continue }
                let thisFirst = (entity.name, relationship.name) <= (destination.name, inverse.name)
                switch (relationship.isToMany, inverse.isToMany) {
                case (false, true): columns.append((relationship.name, "bigint"))
                case (false, false) where thisFirst: columns.append((relationship.name, "bigint"))
                case (true, true) where thisFirst: joinTables[relationship.name] = tableName + "_" + relationship.name
                default: break
                }
            }
            tables[entity.name] = Table(entity: entity, name: tableName, columns: columns, joinTables: joinTables, keyColumn: Self.keyColumn(of: entity))
        }
        var joins: [JoinTable] = []
        for entity in model.entities {
            for relationship in entity.relationships where relationship.isToMany {
                guard let destination = model.entity(named: relationship.destinationEntity),
                      let inverse = destination.relationship(named: relationship.inverseName), inverse.isToMany else { continue }
                if let owned = tables[entity.name]?.joinTables[relationship.name] {
                    tables[entity.name]?.links[relationship.name] = (owned, true)
                    joins.append(JoinTable(name: owned, sourceEntity: entity.name, destinationEntity: destination.name))
                } else if let other = tables[destination.name]?.joinTables[inverse.name] {
                    tables[entity.name]?.links[relationship.name] = (other, false)
                }
            }
        }
        self.joinTables = joins
        self.tables = tables
        var byName = tables
        for table in tables.values where byName[table.name] == nil { byName[table.name] = table }
        self.tablesByName = byName
    }

    /// The table of records carrying entity name `name`: an entity's table, or for a name the
    /// model does not know (a rename transform gave it), the existing table of that name, whose
    /// columns are the properties the records carry.
    public func table(forRecordEntity name: String) -> Table {
        if let table = tablesByName[name] { return table }
        var table = Table(entity: EntityDescription(name: name), name: name, columns: [], joinTables: [:])
        table.takesAnyColumn = true
        return table
    }

    /// The PostgreSQL type of an attribute type.
    ///
    /// ```swift
    /// PostgresMirrorSchema.columnType(.date)   // "timestamptz"
    /// ```
    public static func columnType(_ type: AttributeType) -> String {
        switch type {
        case .string: return "text"
        case .integer: return "bigint"
        case .double: return "double precision"
        case .bool: return "boolean"
        case .date: return "timestamptz"
        case .uuid: return "uuid"
        case .binary: return "bytea"
        }
    }

    /// `"name"`, with quotes doubled.
    public static func quote(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    /// `"schema"."table"`.
    public func qualified(_ table: String) -> String { Self.quote(schema) + "." + Self.quote(table) }

    /// The statements creating the schema, the checkpoint table and every missing mirror table
    /// (`IF NOT EXISTS`: existing tables are kept as they are).
    public func createStatements() -> [String] {
        var statements = ["CREATE SCHEMA IF NOT EXISTS \(Self.quote(schema))", checkpointTableStatement(), checkpointChainColumnsStatement()]
        for entity in tables.keys.sorted() {
            let table = tables[entity]!
            var definitions = ["\(Self.quote(table.keyColumn)) bigint PRIMARY KEY"]
            definitions += table.columns.map { "\(Self.quote($0.name)) \($0.type)" }
            for constraint in table.entity.uniquenessConstraints where constraint.allSatisfy({ name in table.columns.contains { $0.name == name } }) {
                definitions.append("UNIQUE (\(constraint.map(Self.quote).joined(separator: ", "))) DEFERRABLE INITIALLY DEFERRED")
            }
            statements.append("CREATE TABLE IF NOT EXISTS \(qualified(table.name)) (\(definitions.joined(separator: ", ")))")
            for index in table.entity.indexes where index.allSatisfy({ name in table.columns.contains { $0.name == name } }) {
                let indexName = Self.quote(([table.name] + index).joined(separator: "_"))
                statements.append("CREATE INDEX IF NOT EXISTS \(indexName) ON \(qualified(table.name)) (\(index.map(Self.quote).joined(separator: ", ")))")
            }
            for join in table.joinTables.keys.sorted() {
                statements.append("CREATE TABLE IF NOT EXISTS \(qualified(table.joinTables[join]!)) (\"src\" bigint NOT NULL, \"dst\" bigint NOT NULL, PRIMARY KEY (\"src\", \"dst\"))")
            }
        }
        return statements
    }

    /// The statement creating the checkpoint table if it is missing.
    public func checkpointTableStatement() -> String {
        "CREATE TABLE IF NOT EXISTS \(qualified(Self.checkpointTable)) (pipeline text PRIMARY KEY, store_id uuid NOT NULL, token bigint NOT NULL, "
            + "\"index\" integer NOT NULL, snapshot boolean NOT NULL, entity text, updated_at timestamptz NOT NULL, chain_token bigint, chain_hash text)"
    }

    /// The statement adding the chain columns (`chain_token`, `chain_hash`) to a checkpoint
    /// table made before them; nothing when they are there.
    public func checkpointChainColumnsStatement() -> String {
        "ALTER TABLE \(qualified(Self.checkpointTable)) ADD COLUMN IF NOT EXISTS chain_token bigint, ADD COLUMN IF NOT EXISTS chain_hash text"
    }
}
