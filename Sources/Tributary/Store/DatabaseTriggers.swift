import Foundation

/// Whether a database has triggers of its own (made by another program, not Tributary's
/// `_tributary_*` ones), read again whenever its schema changed: Tributary's writes to an
/// adopted database run them (``PersistentStoreDescription/runsDatabaseTriggers``).
final class DatabaseTriggers: Sendable {
    /// The answer, with the schema version it was read at.
    private let known = Locked<(schemaVersion: Int64, present: Bool)?>(nil)

    /// Whether the database on `db` has a trigger of its own now.
    func present(on db: Connection) throws -> Bool {
        let version = try db.scalar("PRAGMA schema_version")?.integerValue ?? 0
        if let known = known.withLock({ $0 }), known.schemaVersion == version { return known.present }
        let present = try db.scalar(#"SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name NOT LIKE '\_tributary\_%' ESCAPE '\')"#)?.integerValue == 1
        known.withLock { $0 = (version, present) }
        return present
    }
}
