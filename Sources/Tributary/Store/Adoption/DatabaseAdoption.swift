import Foundation

/// Which tables of an existing SQLite database to adopt
/// (``PersistentStoreCoordinator/adoptDatabase(at:options:busyTimeout:)``).
///
/// Patterns are globs as SQLite's `GLOB` reads them (`*`, `?`, `[...]`), matched against
/// table names. A table is adopted when it matches an include pattern (every table when
/// there is none) and no exclude pattern.
///
/// ```swift
/// let report = try PersistentStoreCoordinator.adoptDatabase(at: url, options: DatabaseAdoption(exclude: ["cache_*"]))
/// ```
public struct DatabaseAdoption: Sendable, Codable, Equatable {
    /// Tables to adopt; empty for all.
    public var include: [String]
    /// Tables to leave out.
    public var exclude: [String]

    /// Options; the defaults adopt every table.
    public init(include: [String] = [], exclude: [String] = []) {
        self.include = include
        self.exclude = exclude
    }

    /// Whether the table named `name` is to be adopted.
    func adopts(_ name: String) -> Bool {
        (include.isEmpty || include.contains { Glob.matches($0, name) }) && !exclude.contains { Glob.matches($0, name) }
    }
}

/// What adopting a database did.
public struct AdoptionReport: Sendable, Equatable {
    /// One adopted table.
    public struct Table: Sendable, Equatable {
        /// The table, also the entity's name.
        public var name: String
        /// The column that identifies its rows: its `INTEGER PRIMARY KEY`, or `rowid`.
        public var key: String
        /// Its attributes (every column but the key, generated columns and the foreign keys
        /// that became relationships), in column order.
        public var attributes: [String]
        /// Its relationships, in the model's order: a to-one for each foreign key to an adopted
        /// table's `INTEGER PRIMARY KEY`, named after its column (`owner_id`), and the to-many
        /// inverse of each such key of other tables (`notes`).
        public var relationships: [String]
        /// What a user should know: identity by rowid, generated columns left out, defaults
        /// only SQLite applies, what became of each foreign key.
        public var notes: [String]
    }

    /// The store's UUID (kept when a store is adopted again).
    public var storeID: String
    /// Whether the database was a store already (adopting again picks up new tables).
    public var wasAdopted: Bool
    /// Every adopted table, by name.
    public var tables: [Table]
    /// Tables adopted for the first time by this run.
    public var newTables: [String]
    /// Tables left out, each with why (excluded, a view or virtual table).
    public var skipped: [String: String]
}

/// SQLite's `GLOB` matching, for table patterns.
enum Glob {
    static func matches(_ pattern: String, _ name: String) -> Bool {
        fnmatch(pattern, name, 0) == 0
    }
}
