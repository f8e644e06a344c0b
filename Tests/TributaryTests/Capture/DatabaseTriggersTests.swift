import Foundation
import Testing
@testable import Tributary
import TributaryTestSupport

/// An adopted database's own triggers run for Tributary's writes, as for every other
/// program's: before, its writer ran no stored trigger, so `tributary update` left an
/// external-content FTS5 index matching the old text (and SQLite then called it malformed
/// after the application's next update), and an audit trigger wrote nothing. What the
/// triggers write is recorded once, in the write's own transaction. A replica turns them off.
@Suite struct DatabaseTriggersTests {
    let dir = TemporaryDirectory()
    var path: URL { dir.file("app.db") }

    /// Documents kept in an external-content full-text index by triggers, and an audit table
    /// a trigger writes on every update.
    static let schema = """
        CREATE TABLE docs (id INTEGER PRIMARY KEY, title TEXT, body TEXT);
        CREATE VIRTUAL TABLE docs_fts USING fts5(title, body, content='docs', content_rowid='id');
        CREATE TRIGGER docs_ai AFTER INSERT ON docs BEGIN INSERT INTO docs_fts(rowid, title, body) VALUES (new.id, new.title, new.body); END;
        CREATE TRIGGER docs_ad AFTER DELETE ON docs BEGIN INSERT INTO docs_fts(docs_fts, rowid, title, body) VALUES ('delete', old.id, old.title, old.body); END;
        CREATE TRIGGER docs_au AFTER UPDATE ON docs BEGIN
            INSERT INTO docs_fts(docs_fts, rowid, title, body) VALUES ('delete', old.id, old.title, old.body);
            INSERT INTO docs_fts(rowid, title, body) VALUES (new.id, new.title, new.body);
        END;
        CREATE TABLE audit (id INTEGER PRIMARY KEY, doc INTEGER, what TEXT);
        CREATE TRIGGER docs_audit AFTER UPDATE OF body ON docs BEGIN INSERT INTO audit (doc, what) VALUES (new.id, 'body of ' || new.id); END;
        INSERT INTO docs VALUES (1, 'hello', 'world');
        """

    func matches(_ word: String) throws -> String {
        try ForeignWriter.shell(path, "SELECT group_concat(rowid) FROM docs_fts WHERE docs_fts MATCH '\(word)';")
    }

    func updateBody(_ coordinator: PersistentStoreCoordinator, to body: String) throws {
        var request = BatchUpdateRequest(entityName: "docs", predicate: try StorePredicate(format: "title == 'hello'"), propertiesToUpdate: ["body": .string(body)])
        request.transaction = TransactionMetadata(author: "editor")
        #expect(try coordinator.execute(request).updated == 1)
    }

    @Test func tributarysWritesRunTheDatabasesTriggersAndRecordWhatTheyWroteOnce() throws {
        let (coordinator, start) = try Fixtures.adopted(path, schema: Self.schema)
        try updateBody(coordinator, to: "galaxy")
        #expect(try matches("galaxy") == "1\n" && matches("world") == "\n", "the index follows the update")
        var insert = BatchInsertRequest(entityName: "docs", objects: [["title": .string("second"), "body": .string("nebula")]])
        insert.transaction = TransactionMetadata(author: "editor")
        _ = try coordinator.execute(insert)
        #expect(try matches("nebula") == "2\n")
        _ = try coordinator.execute(BatchDeleteRequest(entityName: "docs", predicate: try StorePredicate(format: "title == 'second'")))
        #expect(try matches("nebula") == "\n")
        // The application's next update leaves the index whole.
        try ForeignWriter.shell(path, "UPDATE docs SET title = 'hi' WHERE id = 1; INSERT INTO docs_fts(docs_fts, rank) VALUES ('integrity-check', 1);")
        #expect(try ForeignWriter.shell(path, "SELECT what FROM audit;") == "body of 1\n")

        let transactions = try coordinator.fetchHistory(.fetchHistory(after: start))
        let first = try #require(transactions.first)
        #expect(first.author == "editor" && first.changes.map { "\($0.changeType) \($0.entityName)" } == ["update docs", "insert audit"],
                "the update and what its trigger wrote, once, in its transaction: \(transactions.map { "\($0.author ?? "-") \($0.changes.map(\.entityName))" })")
        #expect(first.changes.first?.properties.first { $0.name == "body" }?.after == .string("galaxy"))
        #expect(transactions.count == 4 && transactions[1].changes.map(\.changeType) == [.insert] && transactions[2].changes.map(\.changeType) == [.delete],
                "\(transactions.map { $0.changes.map { "\($0.changeType) \($0.entityName)" } })")
    }

    @Test func aStoreOpenedWithoutDatabaseTriggersWritesTheRowsAlone() throws {
        _ = try Fixtures.adopted(path, schema: Self.schema)
        let coordinator = PersistentStoreCoordinator()
        let description = PersistentStoreDescription(url: path)
        description.runsDatabaseTriggers = false
        try coordinator.addPersistentStore(with: description)
        let start = try coordinator.currentPersistentHistoryToken()
        try updateBody(coordinator, to: "galaxy")
        #expect(try ForeignWriter.shell(path, "SELECT count(*) FROM audit;") == "0\n")
        let changes = try coordinator.fetchHistoryChanges(.fetchHistory(after: start))
        #expect(changes.map { "\($0.changeType) \($0.entityName)" } == ["update docs"])
    }

    /// A row the database's own trigger skips (`RAISE(IGNORE)`) is counted as ignored, not
    /// as updated (an insert that changes nothing left `last_insert_rowid` at 0, the mark of
    /// an upsert's update), and leaves no history; in a `WITHOUT ROWID` table it failed the
    /// batch (its row had no number), and through a split upsert it counted as updated.
    @Test func aRowTheDatabasesTriggerSkipsIsCountedAsIgnored() throws {
        let schema = """
            CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT);
            CREATE TRIGGER notes_skip BEFORE INSERT ON notes WHEN NEW.text = 'spam' BEGIN SELECT RAISE(IGNORE); END;
            CREATE TABLE tags (name TEXT PRIMARY KEY, color TEXT) WITHOUT ROWID;
            CREATE TRIGGER tags_skip BEFORE INSERT ON tags WHEN NEW.color = 'spam' BEGIN SELECT RAISE(IGNORE); END;
            CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT UNIQUE, name TEXT);
            CREATE TRIGGER users_skip BEFORE INSERT ON users WHEN NEW.name = 'spam' BEGIN SELECT RAISE(IGNORE); END;
            CREATE TRIGGER users_touch AFTER UPDATE ON users BEGIN SELECT 1; END;
            CREATE TRIGGER users_frozen BEFORE UPDATE ON users WHEN OLD.name = 'frozen' BEGIN SELECT RAISE(IGNORE); END;
            INSERT INTO users (email, name) VALUES ('f@x', 'frozen');
            CREATE TRIGGER tags_frozen BEFORE UPDATE ON tags WHEN OLD.color = 'frozen' BEGIN SELECT RAISE(IGNORE); END;
            INSERT INTO tags VALUES ('ice', 'frozen');
            """
        let (coordinator, start) = try Fixtures.adopted(path, schema: schema)
        let batches: [(String, [[String: AttributeValue]])] = [
            ("notes", [["text": .string("a")], ["text": .string("spam")], ["text": .string("b")]]),
            ("tags", [["name": .string("red"), "color": .string("#f00")], ["name": .string("junk"), "color": .string("spam")]]),
            ("users", [["email": .string("a@x"), "name": .string("A")], ["email": .string("s@x"), "name": .string("spam")]]),
        ]
        for (entity, objects) in batches {
            let result = try coordinator.execute(BatchInsertRequest(entityName: entity, objects: objects))
            #expect(result.inserted == objects.count - 1 && result.updated == 0 && result.ignored == 1 && result.count == objects.count - 1, "\(entity): \(result)")
        }
        // Upserts onto rows whose update the database's trigger skips (in a WITHOUT ROWID table, it counted as updated).
        for (entity, object) in [("users", ["email": AttributeValue.string("f@x"), "name": .string("thawed")]), ("tags", ["name": .string("ice"), "color": .string("blue")])] {
            let frozen = try coordinator.execute(BatchInsertRequest(entityName: entity, objects: [object]))
            #expect(frozen.updated == 0 && frozen.ignored == 1 && frozen.count == 0, "\(entity): \(frozen)")
        }
        let changes = try coordinator.fetchHistoryChanges(.fetchHistory(after: start))
        #expect(changes.map { "\($0.changeType) \($0.entityName)" } == ["insert notes", "insert notes", "insert tags", "insert users"])
    }
}
