import Foundation
import Testing
@testable import Tributary
import TributaryTestSupport

/// `WITHOUT ROWID` tables are adopted: their rows are numbered in `_tributary_keys_<table>`
/// (numbers kept across `VACUUM`, following a row whose key changes), other programs' writes
/// to them are recorded with the declared key, Tributary reads them like any table and writes
/// them through their capture triggers (``WithoutRowidTests+Writes``): its saves and batch
/// requests, and links and cascades from other entities.
@Suite struct WithoutRowidTests {
    let dir = TemporaryDirectory()
    var path: URL { dir.file("app.db") }

    /// A text key compared without case, a composite key with a unique column, an
    /// `INTEGER PRIMARY KEY` (no rowid alias in such a table), and a rowid table beside them.
    static let schema = """
        CREATE TABLE tags (name TEXT COLLATE NOCASE PRIMARY KEY, color TEXT, data BLOB) WITHOUT ROWID;
        CREATE TABLE scores (player TEXT, game INTEGER, points REAL, code TEXT UNIQUE, PRIMARY KEY (player, game)) WITHOUT ROWID;
        CREATE TABLE events (id INTEGER PRIMARY KEY, what TEXT) WITHOUT ROWID;
        CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);
        INSERT INTO tags VALUES ('red', '#f00', X'00ff'), ('blue', '#00f', NULL);
        INSERT INTO scores VALUES ('ann', 1, 10.5, 'a1'), ('bob', 1, 7, 'b1');
        INSERT INTO events VALUES (10, 'boot');
        INSERT INTO notes VALUES (1, 'hello');
        """

    /// The adopted database, opened (its pin keeps transaction boundaries), and the token
    /// before the test's writes.
    func adopted() throws -> (PersistentStoreCoordinator, PersistentHistoryToken) {
        try ForeignWriter.shell(path, Self.schema)
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        let coordinator = try Fixtures.adoptedCoordinator(path)
        return (coordinator, try coordinator.currentPersistentHistoryToken())
    }

    /// Each change as `type entity/pN key…`, e.g. `update tags/p2 name=red`.
    func summary(_ changes: [PersistentHistoryChange]) -> [String] {
        changes.map { change in
            let key = change.key.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.storedText)" }
            return (["\(change.changeType) \(change.entityName)/p\(change.changedObjectID.primaryKey)"] + key).joined(separator: " ")
        }
    }

    func property(_ change: PersistentHistoryChange?, _ name: String) -> (before: AttributeValue?, after: AttributeValue?)? {
        change?.properties.first { $0.name == name }.map { ($0.before, $0.after) }
    }

    /// `name → object ID's number` of a table, read through Tributary.
    func numbers(_ coordinator: PersistentStoreCoordinator, _ entity: String, by key: String) throws -> [String: Int64] {
        let rows = try coordinator.fetch(FetchRequest(entityName: entity))
        return Dictionary(rows.map { ($0[key]?.storedText ?? "", $0.objectID.primaryKey) }, uniquingKeysWith: { a, _ in a })
    }

    @Test func adoptionNumbersTheRowsAndReadsThemLikeAnyTable() throws {
        let (coordinator, _) = try adopted()
        let model = try #require(coordinator.persistentStores.first?.model)
        let tags = try model.requireEntity("tags")
        #expect(tags.isWithoutRowid && tags.tableKey == "rowid" && tags.declaredKey == ["name"])
        #expect(try model.requireEntity("scores").declaredKey == ["player", "game"])
        #expect(try model.requireEntity("events").declaredKey == ["id"] && model.requireEntity("events").attribute(named: "id") != nil,
                "an INTEGER PRIMARY KEY of a WITHOUT ROWID table is no rowid alias: an attribute, and the declared key")
        #expect(try !model.requireEntity("notes").isWithoutRowid)
        #expect(try ManagedObjectModel(yaml: model.yamlText) == model, "the YAML model keeps it")
        #expect(try numbers(coordinator, "tags", by: "name") == ["blue": 1, "red": 2], "numbered in key order")
        let red = try coordinator.fetch(FetchRequest(entityName: "tags", predicate: try StorePredicate(format: "name == 'RED'")))
        #expect(red.map { $0["color"] } == [.string("#f00")], "the key's collation holds: NOCASE")
        #expect(try coordinator.count(for: FetchRequest(entityName: "scores", predicate: try StorePredicate(format: "points > 8"))) == 1)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let objects = try context.fetch(FetchRequest(entityName: "scores", sortDescriptors: [SortDescriptor("player")]))
        #expect(objects.map { $0["code"] } == [.string("a1"), .string("b1")] && objects.map(\.objectID.primaryKey) == [1, 2])
    }

    @Test func everyWriteOfTheShellAndPythonIsRecordedAndTheKeyChangeFollowsTheObject() throws {
        let (coordinator, start) = try adopted()
        try ForeignWriter.shell(path, """
            BEGIN;
            INSERT INTO tags VALUES ('green', '', X'');
            UPDATE tags SET color = NULL, data = X'01' WHERE name = 'RED';
            COMMIT;
            UPDATE tags SET name = 'crimson' WHERE name = 'red';
            DELETE FROM tags WHERE name = 'blue';
            UPDATE scores SET points = points + 1, game = 2 WHERE player = 'ann';
            """)
        try ForeignWriter.python(path, """
            db.execute("INSERT INTO events VALUES (11, 'from python')")
            db.commit()
            db.execute("DELETE FROM events")
            db.rollback()
            db.execute("DELETE FROM scores")
            db.commit()
            """)
        let transactions = try coordinator.fetchHistory(.fetchHistory(after: start))
        #expect(transactions.map { summary($0.changes) } == [
            ["insert tags/p3 name=green", "update tags/p2 name=red"],
            ["update tags/p2 name=red"],
            ["delete tags/p1 name=blue"],
            ["update scores/p1 game=1 player=ann"],
            ["insert events/p2 id=11"],
            ["delete scores/p1 game=2 player=ann", "delete scores/p2 game=1 player=bob"],
        ], "\(transactions.map { summary($0.changes) })")
        #expect(transactions.allSatisfy { $0.processName == "foreign" })
        let green = transactions[0].changes[0], red = transactions[0].changes[1]
        #expect(property(green, "color")?.after == .string("") && property(green, "data")?.after == .data(Data()), "empty values are values")
        #expect(property(red, "color")?.before == .string("#f00") && property(red, "color")?.after == .null, "a value to NULL counts")
        #expect(property(red, "data")?.before == .data(Data([0, 0xff])) && property(red, "data")?.after == .data(Data([1])))
        let renamed = transactions[1].changes[0]
        #expect(property(renamed, "name")?.before == .string("red") && property(renamed, "name")?.after == .string("crimson"),
                "a key change is an update of the same object: its number follows the row")
        #expect(property(transactions[2].changes[0], "color")?.before == .string("#00f"), "a delete's tombstone has the row's values")
        #expect(property(transactions[3].changes[0], "game")?.after == .integer(2) && property(transactions[3].changes[0], "points")?.after == .double(11.5))
        #expect(try numbers(coordinator, "tags", by: "name") == ["crimson": 2, "green": 3])
    }

    @Test func replaceUpsertAndAKeyUsedAgain() throws {
        let (coordinator, start) = try adopted()
        try ForeignWriter.shell(path, """
            INSERT OR REPLACE INTO tags VALUES ('RED', '#e00', NULL);
            INSERT INTO scores VALUES ('cat', 2, 3, 'b1') ON CONFLICT (code) DO UPDATE SET points = points + 1;
            INSERT OR REPLACE INTO scores VALUES ('dan', 5, 1, 'a1');
            DELETE FROM tags WHERE name = 'blue';
            INSERT OR ABORT INTO tags VALUES ('blue', '#00e', NULL);
            UPDATE OR REPLACE scores SET player = 'dan', game = 5 WHERE player = 'bob';
            """)
        let transactions = try coordinator.fetchHistory(.fetchHistory(after: start))
        #expect(transactions.map { summary($0.changes) } == [
            ["update tags/p2 name=red"],
            ["update scores/p2 game=1 player=bob"],
            ["delete scores/p1 game=1 player=ann", "insert scores/p3 game=5 player=dan"],
            ["delete tags/p1 name=blue"],
            ["insert tags/p1 name=blue"],
            ["delete scores/p3 game=5 player=dan", "update scores/p2 game=1 player=bob"],
        ], "\(transactions.map { summary($0.changes) })")
        // INSERT OR REPLACE of a row's own key (by its collation): the same object, its values replaced.
        #expect(property(transactions[0].changes[0], "color")?.before == .string("#f00") && property(transactions[0].changes[0], "color")?.after == .string("#e00"))
        #expect(property(transactions[0].changes[0], "name")?.after == .string("RED"))
        // Through the unique code: the row in the way goes (no delete trigger runs for it), a new object comes.
        #expect(property(transactions[2].changes[0], "points")?.before == .double(10.5))
        #expect(property(transactions[1].changes[0], "points")?.after == .double(8), "an UPSERT's update branch is an update")
        #expect(property(transactions[4].changes[0], "color")?.after == .string("#00e"),
                "a key used again is its old object again, and INSERT OR ABORT does not trip over its kept number")
        #expect(try numbers(coordinator, "scores", by: "player") == ["dan": 2])
    }

    @Test func vacuumKeepsTheObjectIDs() throws {
        let (coordinator, start) = try adopted()
        try ForeignWriter.shell(path, "DELETE FROM tags WHERE name = 'blue'; INSERT INTO tags VALUES ('amber', 'x', NULL);")
        let before = try numbers(coordinator, "tags", by: "name")
        try ForeignWriter.shell(path, "VACUUM;")
        #expect(try numbers(coordinator, "tags", by: "name") == before && before == ["amber": 3, "red": 2])
        try ForeignWriter.shell(path, "UPDATE tags SET color = 'y' WHERE name = 'amber';")
        #expect(summary(try coordinator.fetchHistoryChanges(.fetchHistory(after: start))).last == "update tags/p3 name=amber")
    }

    @Test func writesUnderTrustedSchemaOffAreRecorded() throws {
        let (coordinator, start) = try adopted()
        try ForeignWriter.shell(path, "PRAGMA trusted_schema = OFF; INSERT INTO tags VALUES ('teal', NULL, NULL); UPDATE scores SET points = 0;")
        #expect(summary(try coordinator.fetchHistoryChanges(.fetchHistory(after: start))) == [
            "insert tags/p3 name=teal", "update scores/p1 game=1 player=ann", "update scores/p2 game=1 player=bob",
        ])
    }

    @Test func undoLeavesTheDumpAsItWas() throws {
        try ForeignWriter.shell(path, Self.schema)
        let before = try ForeignWriter.shell(path, ".dump")
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        do {
            let coordinator = try Fixtures.adoptedCoordinator(path)
            try ForeignWriter.shell(path, "UPDATE tags SET color = 'x' WHERE name = 'red'; UPDATE tags SET color = '#f00' WHERE name = 'red';")
            _ = try coordinator.fetchHistory(.fetchHistory(after: nil))
        }
        let removed = try PersistentStoreCoordinator.undoAdoption(at: path)
        #expect(removed.contains("_tributary_keys_tags") && removed.contains("_tributary_keys_scores"))
        #expect(try ForeignWriter.shell(path, ".dump") == before)
    }

    @Test func keysWrittenWhileTheTriggersWereDroppedAreNumberedWhenTheyComeBack() throws {
        try ForeignWriter.shell(path, Self.schema)
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        let names = try ForeignWriter.shell(path, "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'tags';")
        let drops = names.split(separator: "\n").map { "DROP TRIGGER \"\($0)\";" }.joined()
        try ForeignWriter.shell(path, drops + "INSERT INTO tags VALUES ('pink', NULL, NULL);")
        let coordinator = try Fixtures.adoptedCoordinator(path)
        #expect(try numbers(coordinator, "tags", by: "name") == ["blue": 1, "red": 2, "pink": 3], "readable again, numbered")
        let gap = try coordinator.fetchHistory(.fetchHistory(after: nil)).last
        #expect(gap?.contextName?.contains("tags") == true && gap?.contextName?.contains("may be missing") == true, "\(gap?.contextName ?? "")")
        try ForeignWriter.shell(path, "DELETE FROM tags WHERE name = 'pink';")
        #expect(summary(try coordinator.fetchHistoryChanges(.fetchHistory(after: gap?.token))) == ["delete tags/p3 name=pink"])
    }

    @Test func aTableAnotherProgramMakesIsDetectedAloneAndAdoptedAgainWithItsNumbers() throws {
        let (coordinator, start) = try adopted()
        try ForeignWriter.shell(path, "CREATE TABLE labels (code TEXT PRIMARY KEY, text TEXT) WITHOUT ROWID; INSERT INTO labels VALUES ('a', 'A');")
        try coordinator.execute(BatchUpdateRequest(entityName: "notes", predicate: nil, propertiesToUpdate: ["body": .string("hi")]))
        let detected = try coordinator.fetchHistory(.fetchHistory(after: start)).compactMap(\.schemaChange)
        #expect(detected.count == 1 && detected[0].changes == ["added entity labels"],
                "the open store reads its tables through TEMP views: the detection reads the tables themselves: \(detected)")
        let again = try PersistentStoreCoordinator.adoptDatabase(at: path)
        #expect(again.newTables == ["labels"])
        let reopened = try Fixtures.adoptedCoordinator(path)
        let before = try reopened.currentPersistentHistoryToken()
        try ForeignWriter.shell(path, "UPDATE labels SET text = 'B'; UPDATE tags SET color = 'x' WHERE name = 'blue';")
        #expect(summary(try reopened.fetchHistoryChanges(.fetchHistory(after: before))) == ["update labels/p1 code=a", "update tags/p1 name=blue"])
    }

    @Test func aLinkAndACascadeFromAnotherEntityWriteItThroughTheTriggers() throws {
        try ForeignWriter.shell(path, """
            CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT);
            CREATE TABLE memos (code TEXT PRIMARY KEY, owner_id INTEGER REFERENCES users (id) ON DELETE CASCADE) WITHOUT ROWID;
            INSERT INTO users VALUES (1, 'ann'), (2, 'bob');
            INSERT INTO memos VALUES ('m1', 1), ('m2', 1);
            """)
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        let coordinator = try Fixtures.adoptedCoordinator(path)
        let start = try coordinator.currentPersistentHistoryToken()
        #expect(try coordinator.fetch(FetchRequest(entityName: "memos", predicate: try StorePredicate(format: "owner_id.name == 'ann'"))).count == 2)
        let memos = try numbers(coordinator, "memos", by: "code")
        let m1 = try #require(memos["m1"]), m2 = try #require(memos["m2"])
        var link = BatchUpdateRequest(entityName: "users", predicate: try StorePredicate(format: "name == 'bob'"), propertiesToUpdate: ["name": .string("Bob")])
        link.addedLinks = ["memos": [ObjectID(storeID: try #require(coordinator.persistentStores.first).identifier, entityName: "memos", primaryKey: m1)]]
        try coordinator.execute(link)
        try coordinator.execute(BatchDeleteRequest(entityName: "users", predicate: try StorePredicate(format: "name == 'ann'")))
        #expect(try ForeignWriter.shell(path, "SELECT group_concat(name) FROM users; SELECT group_concat(code || owner_id) FROM memos;") == "Bob\nm12\n")
        let transactions = try coordinator.fetchHistory(.fetchHistory(after: start))
        #expect(transactions.map { Set(summary($0.changes)) } == [["update users/p2", "update memos/p\(m1) code=m1"], ["delete users/p1", "delete memos/p\(m2) code=m2"]],
                "\(transactions.map { summary($0.changes) })")
    }

    @Test func adoptingAgainWithoutATableDropsItsNumbers() throws {
        try ForeignWriter.shell(path, Self.schema)
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path, options: DatabaseAdoption(exclude: ["tags"]))
        let maps = "SELECT group_concat(name) FROM (SELECT name FROM sqlite_master WHERE name LIKE '\\_tributary\\_keys\\_%' ESCAPE '\\' AND type = 'table' ORDER BY name);"
        #expect(try ForeignWriter.shell(path, maps) == "_tributary_keys_events,_tributary_keys_scores\n")
        try ForeignWriter.shell(path, "INSERT INTO tags VALUES ('free', NULL, NULL);")
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path, options: DatabaseAdoption(exclude: ["nothing"]))
        let coordinator = try Fixtures.adoptedCoordinator(path)
        #expect(try numbers(coordinator, "tags", by: "name") == ["blue": 1, "free": 2, "red": 3], "numbered afresh, in key order")
    }

    @Test func aMapAnotherProgramDroppedIsMadeAgainAtTheNextOpen() throws {
        try ForeignWriter.shell(path, Self.schema)
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        try ForeignWriter.shell(path, "DROP TABLE _tributary_keys_tags;")
        let coordinator = try Fixtures.adoptedCoordinator(path)
        #expect(try numbers(coordinator, "tags", by: "name") == ["blue": 1, "red": 2], "numbered afresh")
        let start = try coordinator.currentPersistentHistoryToken()
        try ForeignWriter.shell(path, "INSERT INTO tags VALUES ('gold', NULL, NULL);")
        #expect(summary(try coordinator.fetchHistoryChanges(.fetchHistory(after: start))) == ["insert tags/p3 name=gold"], "other programs' writes work and are captured")
    }
}
