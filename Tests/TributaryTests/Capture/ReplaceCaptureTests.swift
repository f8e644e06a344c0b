import Foundation
import Testing
@testable import Tributary
import TributaryTestSupport

/// The rows SQLite removes for `OR REPLACE` without running a delete trigger, on every
/// kind of unique index it enforces: a collated column, an expression, and through an
/// `UPDATE OR REPLACE` of a unique column (issue 22: each was missing from history).
@Suite struct ReplaceCaptureTests {
    let dir = TemporaryDirectory()
    var path: URL { dir.file("app.db") }

    /// An adopted database with `users` (email unique without case) and `tags` (label unique
    /// by `lower(label)`), and the token before the test's writes.
    func adopted() throws -> (PersistentStoreCoordinator, PersistentHistoryToken) {
        try ForeignWriter.shell(path, """
            CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT, name TEXT);
            CREATE UNIQUE INDEX users_email ON users (email COLLATE NOCASE);
            CREATE TABLE tags (id INTEGER PRIMARY KEY, label TEXT, uses INTEGER GENERATED ALWAYS AS (length(label)) VIRTUAL);
            CREATE UNIQUE INDEX tags_label ON tags (lower(label) DESC);
            CREATE UNIQUE INDEX tags_uses ON tags (uses + 0);
            INSERT INTO users VALUES (1, 'Ann@example.com', 'Ann'), (2, 'bob@example.com', 'Bob');
            INSERT INTO tags (id, label) VALUES (1, 'Swift');
            """)
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        let coordinator = try Fixtures.adoptedCoordinator(path)
        return (coordinator, try coordinator.currentPersistentHistoryToken())
    }

    /// Each change after `start` as `type entity key`, in order.
    func changes(_ coordinator: PersistentStoreCoordinator, after start: PersistentHistoryToken) throws -> [String] {
        try coordinator.fetchHistory(.fetchHistory(after: start)).flatMap(\.changes).map {
            "\($0.changeType) \($0.entityName) \($0.changedObjectID.primaryKey)"
        }
    }

    @Test func aReplaceThroughACollatedOrExpressionIndexRecordsTheRowItRemoved() throws {
        let (coordinator, start) = try adopted()
        try ForeignWriter.shell(path, """
            INSERT OR REPLACE INTO users (id, email, name) VALUES (3, 'ANN@EXAMPLE.COM', 'Ann again');
            INSERT OR REPLACE INTO tags (id, label) VALUES (2, 'SWIFT');
            """)
        #expect(try changes(coordinator, after: start) == ["delete users 1", "insert users 3", "delete tags 1", "insert tags 2"])
        let delete = try coordinator.fetchHistory(.fetchHistory(after: start)).flatMap(\.changes).first
        #expect(delete?.tombstone["name"] == .string("Ann"))
    }

    @Test func anUpdateOrReplaceOfAUniqueColumnRecordsTheRowItRemoved() throws {
        let (coordinator, start) = try adopted()
        try ForeignWriter.shell(path, "UPDATE OR REPLACE users SET email = 'BOB@example.com' WHERE id = 1;")
        #expect(try ForeignWriter.shell(path, "SELECT id FROM users;") == "1\n")
        #expect(try changes(coordinator, after: start) == ["delete users 2", "update users 1"])
    }

    /// Before the fix, an `UPDATE OR REPLACE` that set only a column of a partial unique
    /// index's condition (bringing the row into the index) removed the row in its way with
    /// nothing recorded: the probe ran only on updates of the index's own columns.
    @Test func anUpdateIntoAPartialUniqueIndexRecordsTheRowItRemoved() throws {
        let (coordinator, start) = try adopted("""
            CREATE TABLE members (id INTEGER PRIMARY KEY, email TEXT, active INTEGER);
            CREATE UNIQUE INDEX members_active_email ON members (email) WHERE active = 1;
            INSERT INTO members VALUES (3, 'b@example.com', 0), (4, 'b@example.com', 1), (5, 'b@example.com', 0);
            """)
        try ForeignWriter.shell(path, "UPDATE OR REPLACE members SET active = 1 WHERE id = 3;")
        #expect(try ForeignWriter.shell(path, "SELECT id FROM members ORDER BY id;") == "3\n5\n")
        #expect(try changes(coordinator, after: start) == ["delete members 4", "update members 3"])
        let delete = try coordinator.fetchHistory(.fetchHistory(after: start)).flatMap(\.changes).first
        #expect(delete?.tombstone["active"] == .integer(1))
    }

    /// An adopted database of `schema` and the token before the test's writes.
    func adopted(_ schema: String) throws -> (PersistentStoreCoordinator, PersistentHistoryToken) {
        try Fixtures.adopted(path, schema: schema)
    }

    /// Before the fix, a partial index whose condition reads the key (or an index on an
    /// expression of it) was not probed when an `UPDATE OR REPLACE` changed only the key:
    /// the update trigger ran on the other columns' updates.
    @Test func aKeyMovedIntoAPartialUniqueIndexRecordsTheRowItRemoved() throws {
        let (coordinator, start) = try adopted("""
            CREATE TABLE p (id INTEGER PRIMARY KEY, email TEXT);
            CREATE UNIQUE INDEX p_email ON p (email) WHERE id > 5;
            INSERT INTO p VALUES (2, 'a'), (6, 'a');
            """)
        try ForeignWriter.shell(path, "UPDATE OR REPLACE p SET id = 10 WHERE id = 2;")
        #expect(try ForeignWriter.shell(path, "SELECT id FROM p;") == "10\n")
        #expect(try changes(coordinator, after: start) == ["delete p 6", "delete p 2", "insert p 10"])
    }

    /// Before the fix, a partial index whose `CREATE` statement ends in a `--` comment, or
    /// whose condition reads a generated column, was left out of the probe altogether (its
    /// condition did not compile as a term): an `INSERT OR REPLACE` through it removed a row
    /// with nothing recorded. The comment ends at a line break; a condition the probe cannot
    /// read is left out, and the index probed by its columns.
    @Test(arguments: ["WHERE st = 'y' -- only live rows\n", "WHERE live"])
    func aPartialIndexWhoseConditionCannotBeATermIsStillProbed(condition: String) throws {
        let (coordinator, start) = try adopted("""
            CREATE TABLE p (id INTEGER PRIMARY KEY, email TEXT, st TEXT, live INTEGER GENERATED ALWAYS AS (st = 'y') VIRTUAL);
            CREATE UNIQUE INDEX p_live_email ON p (email) \(condition);
            INSERT INTO p (id, email, st) VALUES (1, 'a', 'y');
            """)
        try ForeignWriter.shell(path, "INSERT OR REPLACE INTO p (id, email, st) VALUES (3, 'a', 'y');")
        #expect(try ForeignWriter.shell(path, "SELECT id FROM p;") == "3\n")
        #expect(try changes(coordinator, after: start) == ["delete p 1", "insert p 3"])
    }

    /// A store with format 8's triggers (column triggers not comparing storage classes, the
    /// probe of an expression index not run on the key's updates) is upgraded when opened,
    /// not reported as triggers another program altered.
    @Test func theTriggersOfFormat8AreUpgradedWithoutACaptureGap() throws {
        do { _ = try adopted("CREATE TABLE p (id INTEGER PRIMARY KEY, email TEXT); CREATE UNIQUE INDEX p_lower ON p (lower(email));") }
        let select = "SELECT sql || ';' FROM sqlite_master WHERE type = 'trigger' AND name GLOB '_tributary_capture_*' ORDER BY name;"
        let current = try ForeignWriter.shell(path, select)
        let drop = try ForeignWriter.shell(path, "SELECT 'DROP TRIGGER \"' || name || '\";' FROM sqlite_master WHERE type = 'trigger' AND name GLOB '_tributary_capture_*';")
        let format8 = current.replacingOccurrences(of: #" OR typeof\(OLD\."[^"]+"\) <> typeof\(NEW\."[^"]+"\) BEGIN "#, with: " BEGIN ", options: .regularExpression)
            .replacingOccurrences(of: #"UPDATE OF "email", "id" ON"#, with: #"UPDATE OF "email" ON"#)
        #expect(current.contains(#"UPDATE OF "email", "id" ON"#) && !format8.contains("typeof") && !format8.contains(#""email", "id""#))
        try ForeignWriter.shell(path, drop + format8 + "UPDATE _tributary_metadata SET value = '8' WHERE key = 'historyFormat';")
        let coordinator = try Fixtures.adoptedCoordinator(path)
        #expect(try ForeignWriter.shell(path, select) == current)
        #expect(try !coordinator.fetchHistory(.fetchHistory(after: nil)).contains { $0.processName == "capture gap" })
    }

    /// A partial index was probed by its columns alone before its condition became a term:
    /// opening such a store is an upgrade, not a unique index another program made.
    @Test func aPartialIndexProbedWithoutItsConditionBeforeIsNoNewIndex() throws {
        do { _ = try adopted("CREATE TABLE p (id INTEGER PRIMARY KEY, email TEXT, active INTEGER); CREATE UNIQUE INDEX p_email ON p (email) WHERE active;") }
        #expect(try ForeignWriter.shell(path, "SELECT uniques FROM \(CaptureLog.tables) WHERE name = 'p';").contains("active"))
        try ForeignWriter.shell(path, #"UPDATE \#(CaptureLog.tables) SET uniques = '[["email"]]' WHERE name = 'p';"#)
        let coordinator = try Fixtures.adoptedCoordinator(path)
        #expect(try !coordinator.fetchHistory(.fetchHistory(after: nil)).contains { $0.processName == "capture gap" })
    }

    @Test func anIndexOnAGeneratedColumnIsLeftOutOfTheProbeAndWritesStillWork() throws {
        let (coordinator, start) = try adopted()
        try ForeignWriter.python(path, """
            db.execute("INSERT INTO tags (id, label) VALUES (5, 'Go')")
            db.commit()
            """)
        #expect(try changes(coordinator, after: start) == ["insert tags 5"])
        let probe = try ForeignWriter.shell(path, "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'tags' AND name GLOB '*_r';")
        #expect(probe.contains("lower(label)") && !probe.contains("uses"))
    }

    @Test func theIndexTermsAreReadFromTheCreateStatement() {
        #expect(UniqueIndexes.keyTerms("CREATE UNIQUE INDEX i ON t (lower(a) DESC, \"b,c\" COLLATE NOCASE, coalesce(d, ')') asc) WHERE e > 0")
                == ["lower(a)", "\"b,c\" COLLATE NOCASE", "coalesce(d, ')')"])
        #expect(UniqueIndexes.keyTerms("CREATE UNIQUE INDEX \"by (name)\" ON [t (x)] (upper(name))") == ["upper(name)"])
        #expect(UniqueIndexes.keyTerms("CREATE UNIQUE INDEX i ON t") == [])
        #expect(UniqueIndexes.partialCondition("CREATE UNIQUE INDEX i ON t (lower(a), b) WHERE e > 0 AND \"f)\" IS NOT NULL") == "e > 0 AND \"f)\" IS NOT NULL")
        #expect(UniqueIndexes.partialCondition("CREATE UNIQUE INDEX \"where (x)\" ON t (a)\n  where(a > 0)") == "(a > 0)")
        #expect(UniqueIndexes.partialCondition("CREATE UNIQUE INDEX i ON t (a)") == nil)
    }
}

/// A unique index another program makes on a captured table is probed from the next check
/// on, and what an `OR REPLACE` through it removed before is reported as a capture gap.
@Suite struct NewUniqueIndexTests {
    let dir = TemporaryDirectory()
    var path: URL { dir.file("app.db") }

    @Test func aUniqueIndexAnotherProgramMadeIsAGapAndThenProbed() throws {
        try ForeignWriter.shell(path, "CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT); INSERT INTO users VALUES (1, 'ann@example.com');")
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        do { _ = try Fixtures.adoptedCoordinator(path) }
        try ForeignWriter.shell(path, """
            CREATE UNIQUE INDEX users_email ON users (email);
            INSERT OR REPLACE INTO users VALUES (2, 'ann@example.com');
            """)
        let coordinator = try Fixtures.adoptedCoordinator(path)
        let gaps = try coordinator.fetchHistory(.fetchHistory(after: nil)).filter { $0.processName == "capture gap" }
        #expect(gaps.contains { $0.contextName?.contains("another program made a unique index") == true && $0.contextName?.contains("users") == true })
        let start = try coordinator.currentPersistentHistoryToken()
        try ForeignWriter.shell(path, "INSERT OR REPLACE INTO users VALUES (3, 'ann@example.com');")
        let changes = try coordinator.fetchHistory(.fetchHistory(after: start)).flatMap(\.changes).map { "\($0.changeType) \($0.changedObjectID.primaryKey)" }
        #expect(changes == ["delete 2", "insert 3"])
    }
}
