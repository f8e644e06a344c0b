import Foundation
import Testing
@testable import Tributary
import TributaryTestSupport

/// An existing SQLite database, made by the `sqlite3` shell, becomes a store in place:
/// its tables untouched, every program's writes to them recorded, and undone to the byte
/// of its dump.
@Suite struct AdoptionTests {
    let dir = TemporaryDirectory()
    var path: URL { dir.file("app.db") }

    /// An app's database: an autoincrement key, a text key, a composite key, no key, a
    /// generated column, a STRICT table, a unique index, defaults, a foreign key (a relationship).
    static let appSchema = """
        CREATE TABLE users (id INTEGER PRIMARY KEY AUTOINCREMENT, email TEXT NOT NULL UNIQUE, name TEXT,
            score REAL DEFAULT 0, active BOOLEAN DEFAULT 1, created_at DATETIME DEFAULT CURRENT_TIMESTAMP, avatar BLOB);
        CREATE TABLE tags (label TEXT PRIMARY KEY, color TEXT);
        CREATE TABLE memberships (user_id INTEGER, tag TEXT, PRIMARY KEY (user_id, tag));
        CREATE TABLE notes (body, owner_id INTEGER REFERENCES users(id), loud TEXT GENERATED ALWAYS AS (upper(body)) VIRTUAL);
        CREATE TABLE counters (id INTEGER PRIMARY KEY, hits INTEGER NOT NULL) STRICT;
        CREATE INDEX notes_owner ON notes (owner_id);
        CREATE VIEW active_users AS SELECT * FROM users WHERE active;
        INSERT INTO users (email, name, avatar) VALUES ('ann@example.com', 'Ann', X''), ('bob@example.com', 'Bob', X'00ff');
        INSERT INTO tags VALUES ('red', '#f00'), ('', NULL);
        INSERT INTO memberships VALUES (1, 'red');
        INSERT INTO notes (body, owner_id) VALUES ('hello', 1);
        INSERT INTO counters VALUES (1, 0);
        """

    func makeApp(_ extra: String = "") throws {
        try ForeignWriter.shell(path, Self.appSchema + extra)
    }

    func dump() throws -> String {
        try ForeignWriter.shell(path, ".dump")
    }

    func open() throws -> PersistentStoreCoordinator {
        try Fixtures.adoptedCoordinator(path)
    }

    /// The app's database made, adopted and opened, and the token before the test's writes.
    func adoptedApp() throws -> (PersistentStoreCoordinator, PersistentHistoryToken) {
        try makeApp()
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        let coordinator = try open()
        return (coordinator, try coordinator.currentPersistentHistoryToken())
    }

    func properties(_ change: PersistentHistoryChange?) -> [String: (before: AttributeValue?, after: AttributeValue?)] {
        Dictionary((change?.properties ?? []).map { ($0.name, ($0.before, $0.after)) }, uniquingKeysWith: { a, _ in a })
    }

    @Test func tablesBecomeEntitiesKeyedAsDeclaredAndNothingOfTheUsersChanges() throws {
        try makeApp()
        let schemaBefore = try ForeignWriter.shell(path, "SELECT type, name, sql FROM sqlite_master ORDER BY name;")
        let report = try PersistentStoreCoordinator.adoptDatabase(at: path)
        #expect(report.tables.map(\.name) == ["counters", "memberships", "notes", "tags", "users"])
        let keys = Dictionary(report.tables.map { ($0.name, $0.key) }, uniquingKeysWith: { a, _ in a })
        #expect(keys == ["counters": "id", "memberships": "rowid", "notes": "rowid", "tags": "rowid", "users": "id"])
        let users = try #require(report.tables.first { $0.name == "users" })
        #expect(users.attributes == ["email", "name", "score", "active", "created_at", "avatar"])
        #expect(report.tables.first { $0.name == "notes" }?.attributes == ["body"], "the generated column is left out, the foreign key is a relationship")
        #expect(report.tables.first { $0.name == "notes" }?.relationships == ["owner_id"] && users.relationships == ["notes"])
        #expect(report.tables.first { $0.name == "tags" }?.notes.first?.contains("VACUUM may renumber") == true)
        #expect(report.skipped.isEmpty, "a view is not a table: \(report.skipped)")
        let schemaAfter = try ForeignWriter.shell(path, "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE '\\_tributary\\_%' ESCAPE '\\' AND tbl_name NOT LIKE '\\_tributary\\_%' ESCAPE '\\' ORDER BY name;")
        #expect(schemaAfter == schemaBefore, "only _tributary_ objects are added: \(schemaAfter)")

        let coordinator = try open()
        let model = try #require(coordinator.persistentStores.first?.model)
        let entity = try model.requireEntity("users")
        #expect(entity.attribute(named: "email")?.type == .string && entity.attribute(named: "email")?.isOptional == false)
        #expect(entity.attribute(named: "score")?.defaultValue == .double(0) && entity.attribute(named: "active")?.type == .bool)
        #expect(entity.attribute(named: "created_at")?.type == .string, "a date kept as text stays text")
        #expect(entity.uniquenessConstraints == [["email"]])
        let rows = try coordinator.fetch(FetchRequest(entityName: "users", sortDescriptors: [SortDescriptor("email")]))
        #expect(rows.map { $0.objectID.primaryKey } == [1, 2], "the declared INTEGER PRIMARY KEY is the object's key")
        #expect(rows.first?["avatar"] == .data(Data()))
    }

    @Test func everyProgramsWritesAreRecordedOnceWithTheirValues() throws {
        try makeApp()
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        let coordinator = try open()
        let start = try coordinator.currentPersistentHistoryToken()
        try ForeignWriter.shell(path, """
            BEGIN;
            UPDATE users SET name = NULL WHERE email = 'ann@example.com';
            INSERT OR REPLACE INTO tags VALUES ('red', '#e00');
            UPDATE counters SET id = 7, hits = hits + 1;
            DELETE FROM memberships;
            COMMIT;
            """)
        try ForeignWriter.python(path, """
            db.execute("INSERT INTO notes (body, owner_id) VALUES ('from python', 2)")
            db.commit()
            db.execute("DELETE FROM users")
            db.rollback()
            """)
        try coordinator.execute(BatchUpdateRequest(entityName: "users", predicate: try StorePredicate(format: "email == 'bob@example.com'"), propertiesToUpdate: ["score": .double(2.5)]))
        let transactions = try coordinator.fetchHistory(.fetchHistory(after: start))
        #expect(transactions.map(\.changes.count) == [6, 1, 1], "\(transactions.map { $0.changes.map { "\($0.changeType) \($0.changedObjectID)" } })")
        #expect(transactions.map(\.processName) == ["foreign", "foreign", transactions.last?.processName ?? ""])
        let shell = try #require(transactions.first)
        func find(_ entity: String, _ type: PersistentHistoryChangeType, _ key: Int64) -> PersistentHistoryChange? {
            shell.changes.first { $0.entityName == entity && $0.changeType == type && $0.changedObjectID.primaryKey == key }
        }
        let nameChange = find("users", .update, 1)
        #expect(properties(nameChange)["name"]?.before == .string("Ann") && properties(nameChange)["name"]?.after == .null, "a value to NULL counts")
        // INSERT OR REPLACE on a table keyed by its rowid: the old row goes, a new row (a new rowid) comes.
        #expect(properties(find("tags", .delete, 1))["color"]?.before == .string("#f00"), "the row REPLACE removed is recorded")
        #expect(properties(find("tags", .insert, 3))["color"]?.after == .string("#e00"))
        // A key change: the row under its old key goes, under its new key it comes, with its
        // values, each change naming the other's object.
        #expect(properties(find("counters", .delete, 1))["hits"]?.before == .integer(0))
        #expect(properties(find("counters", .insert, 7))["hits"]?.after == .integer(1))
        #expect(find("counters", .delete, 1)?.movedTo == find("counters", .insert, 7)?.changedObjectID)
        #expect(find("counters", .insert, 7)?.movedFrom == find("counters", .delete, 1)?.changedObjectID && find("counters", .insert, 7)?.movedFrom != nil)
        #expect(properties(find("memberships", .delete, 1))["tag"]?.before == .string("red"))
        let python = transactions[1]
        #expect(python.changes.first?.changeType == .insert && properties(python.changes.first)["body"]?.after == .string("from python"))
        let own = try #require(transactions.last)
        #expect(own.changes.first?.entityName == "users" && properties(own.changes.first)["score"]?.after == .double(2.5), "Tributary's own write, once")
    }

    @Test func tablesThatCannotBeAdoptedAreNamedWithHowToLeaveThemOut() throws {
        try makeApp("""
            CREATE TABLE kv (k TEXT PRIMARY KEY, _pk);
            CREATE TABLE "order.items" (id INTEGER PRIMARY KEY, qty INTEGER);
            CREATE VIRTUAL TABLE docs USING fts5(body);
            """)
        let before = try dump()
        let error = try #require(throws: TributaryError.self) { try PersistentStoreCoordinator.adoptDatabase(at: path) }
        #expect(error.message.contains("cannot adopt 2 tables") && error.message.contains("'kv' has column '_pk'") && error.message.contains("'order.items' has a name holding . / `"),
                "\(error.message)")
        #expect(error.hint?.contains("--exclude kv --exclude 'order.items'") == true, "hint: \(error.hint ?? "")")
        #expect(try dump() == before, "a refused adoption writes nothing")
        #expect(try ForeignWriter.shell(path, "PRAGMA journal_mode;") == "delete\n", "not even the journal mode")
        let report = try PersistentStoreCoordinator.adoptDatabase(at: path, options: DatabaseAdoption(exclude: ["kv", "order*"]))
        #expect(report.skipped["kv"] == "excluded" && report.skipped["order.items"] == "excluded")
        #expect(report.skipped["docs"]?.contains("virtual table") == true && report.skipped["docs_data"]?.contains("virtual table's storage") == true)
        #expect(!report.tables.contains { $0.name.hasPrefix("docs") })
    }

    /// Before the fix, a UTF-16 database was adopted, and Tributary's reads of its text as
    /// UTF-8 bytes recorded a delete's tombstone of 'héllo' as "h\u{0}\u{FFFD}\u{0}…".
    @Test func aUTF16DatabaseIsRefusedWithOneLineAndLeftAsItWas() throws {
        try ForeignWriter.shell(path, "PRAGMA encoding = 'UTF-16le'; CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO t VALUES (1, 'héllo');")
        let before = try dump()
        let error = try #require(throws: TributaryError.self) { try PersistentStoreCoordinator.adoptDatabase(at: path) }
        #expect(error.code == .invalidInput && error.message.contains("UTF-16le") && error.message.contains("UTF-8 databases only"), "\(error.message)")
        #expect(error.hint?.contains(".dump") == true, "hint: \(error.hint ?? "")")
        #expect(try dump() == before, "a refused adoption writes nothing")
        #expect(try ForeignWriter.shell(path, "PRAGMA journal_mode;") == "delete\n", "not even the journal mode")
    }

    @Test func undoingLeavesTheDumpAsItWasAndTheJournalModeBack() throws {
        try makeApp()
        let before = try dump()
        #expect(try ForeignWriter.shell(path, "PRAGMA journal_mode;") == "delete\n")
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        do {
            let coordinator = try open()
            try coordinator.execute(BatchUpdateRequest(entityName: "users", predicate: try StorePredicate(format: "email == 'bob@example.com'"), propertiesToUpdate: ["name": .string("Robert")]))
            try coordinator.execute(BatchUpdateRequest(entityName: "users", predicate: try StorePredicate(format: "email == 'bob@example.com'"), propertiesToUpdate: ["name": .string("Bob")]))
            _ = try coordinator.fetchHistory(.fetchHistory(after: nil))
        }
        try ForeignWriter.shell(path, "UPDATE tags SET color = '#f00' WHERE label = 'red';")
        let removed = try PersistentStoreCoordinator.undoAdoption(at: path)
        #expect(removed.contains("_tributary_metadata") && removed.contains { $0.hasPrefix("_tributary_capture_") })
        #expect(try dump() == before)
        #expect(try ForeignWriter.shell(path, "PRAGMA journal_mode;") == "delete\n")
        let again = try #require(throws: TributaryError.self) { try PersistentStoreCoordinator.undoAdoption(at: path) }
        #expect(again.message.contains("not an adopted database"))
    }

    /// Before the fix, undoing while another process had the database open removed every
    /// Tributary object and then failed to put the journal mode back, with a line about a lock.
    @Test func undoingWhileAnotherProcessHasTheDatabaseOpenChangesNothingAndSaysWhy() throws {
        try makeApp()
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        let objects = { try ForeignWriter.shell(self.path, "SELECT count(*) FROM sqlite_master WHERE name LIKE '\\_tributary\\_%' ESCAPE '\\';") }
        let before = try objects()
        do {
            let coordinator = try open()
            _ = try coordinator.fetchHistory(.fetchHistory(after: nil))
            let error = try #require(throws: TributaryError.self) { try PersistentStoreCoordinator.undoAdoption(at: path, busyTimeout: 0.2) }
            #expect(error.message.contains("another process has the database open") && error.hint?.contains("nothing was removed") == true, "\(error)")
            #expect(try objects() == before && before != "0\n")
        }
        _ = try PersistentStoreCoordinator.undoAdoption(at: path)
        #expect(try objects() == "0\n")
        #expect(try ForeignWriter.shell(path, "PRAGMA journal_mode;") == "delete\n")
    }

    @Test func adoptingAgainPicksUpANewTableAndKeepsTheStore() throws {
        try makeApp()
        let first = try PersistentStoreCoordinator.adoptDatabase(at: path, options: DatabaseAdoption(exclude: ["counters"]))
        try ForeignWriter.shell(path, "CREATE TABLE audits (id INTEGER PRIMARY KEY, what TEXT); INSERT INTO audits (what) VALUES ('before adoption');")
        let second = try PersistentStoreCoordinator.adoptDatabase(at: path)
        #expect(second.wasAdopted && second.storeID == first.storeID)
        #expect(second.newTables == ["audits"], "the exclusion is kept: \(second.newTables)")
        let coordinator = try open()
        let start = try coordinator.currentPersistentHistoryToken()
        try ForeignWriter.shell(path, "INSERT INTO audits (what) VALUES ('after'); UPDATE counters SET hits = 5;")
        let transactions = try coordinator.fetchHistory(.fetchHistory(after: start))
        #expect(transactions.flatMap(\.changes).map(\.entityName) == ["audits"], "counters stays excluded")
    }

    /// Another program makes and drops tables after adoption: Tributary keeps working (it
    /// failed every command with "the store's tables do not match its model") and says once,
    /// in history, which tables are outside capture until the database is adopted again.
    @Test func tablesMadeOrDroppedByAnotherProgramAreReportedOnceAndNothingStops() throws {
        try makeApp()
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        let start = try open().currentPersistentHistoryToken()
        try ForeignWriter.shell(path, "DROP TABLE memberships; CREATE TABLE audits (id INTEGER PRIMARY KEY, what TEXT); INSERT INTO audits (what) VALUES ('lost');")
        for name in ["Robert", "Bob"] {
            let coordinator = try open()
            try coordinator.execute(BatchUpdateRequest(entityName: "users", predicate: try StorePredicate(format: "email == 'bob@example.com'"), propertiesToUpdate: ["name": .string(name)]))
        }
        let transactions = try open().fetchHistory(.fetchHistory(after: start))
        let gaps = transactions.filter { $0.processName == "capture gap" }
        #expect(gaps.count == 1, "reported once: \(transactions.map { "\($0.processName) \($0.contextName ?? "")" })")
        let line = gaps.first?.contextName ?? ""
        #expect(line.contains("another program made audits after token") && line.contains("another program dropped memberships") && line.contains("run tributary adopt again"), "\(line)")
        #expect(transactions.filter { $0.processName != "capture gap" && $0.schemaChange == nil }.count == 2, "both updates are recorded")
        let detected = transactions.compactMap(\.schemaChange)
        #expect(detected.count == 1 && detected[0].isDetected && detected[0].changes == ["added entity audits", "removed entity memberships"], "\(detected)")
        let again = try PersistentStoreCoordinator.adoptDatabase(at: path)
        #expect(again.newTables == ["audits"] && !again.tables.contains { $0.name == "memberships" })
        let coordinator = try open()
        let before = try coordinator.currentPersistentHistoryToken()
        try ForeignWriter.shell(path, "INSERT INTO audits (what) VALUES ('kept');")
        let after = try coordinator.fetchHistory(.fetchHistory(after: before))
        #expect(after.flatMap(\.changes).map(\.entityName) == ["audits"] && !after.contains { $0.processName == "capture gap" })
    }

    /// An app's migration renames and adds columns: the other program's writes keep working
    /// (capture triggers reinstalled with the old column name made its deletes fail with
    /// "no such column: OLD.name"), the columns both have are still captured, and the change
    /// is said once.
    @Test func columnsRenamedByAnotherProgramLeaveItsWritesWorking() throws {
        try makeApp()
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        try ForeignWriter.shell(path, "ALTER TABLE users RENAME COLUMN name TO full_name; ALTER TABLE users ADD COLUMN nickname TEXT;")
        let coordinator = try open()   // its open notices the change (history was empty before)
        try coordinator.execute(BatchUpdateRequest(entityName: "users", predicate: try StorePredicate(format: "email == 'bob@example.com'"), propertiesToUpdate: ["score": .double(1)]))
        try ForeignWriter.shell(path, "UPDATE users SET score = 3, full_name = 'Ann B.' WHERE id = 1; DELETE FROM users WHERE id = 2;")
        let transactions = try coordinator.fetchHistory(.fetchHistory(after: nil))
        let gaps = transactions.filter { $0.processName == "capture gap" }
        #expect(gaps.count == 1 && gaps.first?.contextName?.contains("changed the columns of users (name renamed full_name; full_name, nickname not captured)") == true,
                "\(gaps.map { $0.contextName ?? "" })")
        let changes = transactions.filter { $0.processName == "foreign" || $0.processName.hasPrefix("foreign") }.flatMap(\.changes)
        #expect(changes.contains { $0.changeType == .update && properties($0)["score"]?.after == .double(3) }, "\(changes)")
        #expect(changes.contains { $0.changeType == .delete && $0.changedObjectID.primaryKey == 2 && properties($0)["email"]?.before == .string("bob@example.com") })
        let again = try PersistentStoreCoordinator.adoptDatabase(at: path)
        #expect(again.tables.first { $0.name == "users" }?.attributes.contains("full_name") == true)
    }

    @Test func storesTributaryMadeAreNeitherAdoptedNorUndoneAndAdoptedOnesKeepTheirModel() throws {
        let store = dir.file("blog.sqlite")
        let description = PersistentStoreDescription(url: store)
        description.persistentHistoryTracking = true
        let blog = try Fixtures.blogCoordinator(description)
        try Fixtures.seedBlog(blog, posts: 1)
        for attempt in [{ _ = try PersistentStoreCoordinator.adoptDatabase(at: store) }, { _ = try PersistentStoreCoordinator.undoAdoption(at: store) }] {
            let error = try #require(throws: TributaryError.self) { try attempt() }
            #expect(error.message.contains("a store made by Tributary"), "\(error.message)")
        }
        try makeApp()
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        var entities = try #require(try open().persistentStores.first?.model.entities)
        entities[0].attributes.append(AttributeDescription(name: "extra", type: .string))
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try ManagedObjectModel(entities: entities))
        let error = try #require(throws: TributaryError.self) { try coordinator.addPersistentStore(with: PersistentStoreDescription(url: path)) }
        #expect(error.message.contains("Tributary does not change its tables"))
        let missing = try #require(throws: TributaryError.self) { try PersistentStoreCoordinator.adoptDatabase(at: dir.file("none.db")) }
        #expect(missing.message == "no database at this path")
    }
}
