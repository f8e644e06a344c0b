import Foundation
import Testing
@testable import Tributary
import TributaryTestSupport

/// An adopted table keyed by its rowid because its declared key is text or composite: every
/// change carries the row's key as the table declares it (`PersistentHistoryChange.key`),
/// whoever wrote it, the `sqlite3` shell or Tributary.
@Suite struct DeclaredKeyTests {
    let dir = TemporaryDirectory()
    var path: URL { dir.file("app.db") }

    static let schema = """
        CREATE TABLE users (email TEXT PRIMARY KEY, name TEXT);
        CREATE TABLE members (org TEXT, login TEXT, role TEXT, PRIMARY KEY (org, login));
        CREATE TABLE counters (id INTEGER PRIMARY KEY, hits INTEGER);
        INSERT INTO users VALUES ('ann@example.com', 'Ann'), ('bob@example.com', 'Bob');
        INSERT INTO members VALUES ('acme', 'ann', 'owner');
        INSERT INTO counters VALUES (1, 0);
        """

    /// The adopted database, opened, and the token before the test's writes.
    func adopted() throws -> (PersistentStoreCoordinator, PersistentHistoryToken) {
        try ForeignWriter.shell(path, Self.schema)
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        let coordinator = try Fixtures.adoptedCoordinator(path)
        return (coordinator, try coordinator.currentPersistentHistoryToken())
    }

    func changes(_ coordinator: PersistentStoreCoordinator, after start: PersistentHistoryToken) throws -> [PersistentHistoryChange] {
        try coordinator.fetchHistoryChanges(.fetchHistory(after: start))
    }

    /// `type entity key`, e.g. `update users email=ann@example.com`.
    func summary(_ changes: [PersistentHistoryChange]) -> [String] {
        changes.map { "\($0.changeType) \(Self.summary($0.entityName, $0.key))" }
    }

    /// `entity key`, e.g. `users email=ann@example.com`.
    static func summary(_ entity: String, _ key: [String: AttributeValue]) -> String {
        ([entity] + key.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.storedText)" }).joined(separator: " ")
    }

    @Test func adoptionRecordsTheDeclaredKeyInKeyOrder() throws {
        _ = try adopted()
        let model = try #require(try Fixtures.adoptedCoordinator(path).persistentStores.first?.model)
        #expect(try model.requireEntity("users").declaredKey == ["email"])
        #expect(try model.requireEntity("members").declaredKey == ["org", "login"])
        #expect(try model.requireEntity("counters").declaredKey.isEmpty, "an INTEGER PRIMARY KEY is the object's key")
        let yaml = try ManagedObjectModel(yaml: model.yamlText)
        #expect(yaml == model, "the YAML model keeps it")
    }

    @Test func anotherProgramsWritesCarryTheKey() throws {
        let (coordinator, start) = try adopted()
        try ForeignWriter.shell(path, """
            UPDATE users SET name = 'Annie' WHERE email = 'ann@example.com';
            INSERT INTO users VALUES ('cy@example.com', 'Cy');
            DELETE FROM users WHERE email = 'bob@example.com';
            UPDATE members SET role = 'admin' WHERE org = 'acme' AND login = 'ann';
            INSERT INTO members VALUES ('acme', 'bob', 'member');
            DELETE FROM members WHERE login = 'ann';
            UPDATE counters SET hits = 1;
            """)
        let changes = try changes(coordinator, after: start)
        #expect(summary(changes) == [
            "update users email=ann@example.com", "insert users email=cy@example.com", "delete users email=bob@example.com",
            "update members login=ann org=acme", "insert members login=bob org=acme", "delete members login=ann org=acme",
            "update counters",
        ])
        #expect(changes[0].updatedProperties.map(\.name) == ["name"], "the key is not an updated property")
    }

    @Test func tributarysOwnWritesCarryTheSameKey() throws {
        let (coordinator, start) = try adopted()
        try coordinator.execute(BatchUpdateRequest(entityName: "users", predicate: try StorePredicate(format: "email == 'ann@example.com'"), propertiesToUpdate: ["name": "Annie"]))
        try coordinator.execute(BatchUpdateRequest(entityName: "members", predicate: try StorePredicate(format: "login == 'ann'"), propertiesToUpdate: ["role": "admin"]))
        try coordinator.execute(BatchInsertRequest(entityName: "users", objects: [["email": "cy@example.com", "name": "Cy"]]))
        try coordinator.execute(BatchDeleteRequest(entityName: "users", predicate: try StorePredicate(format: "email == 'bob@example.com'")))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let member = try #require(try context.fetch(FetchRequest(entityName: "members")).first)
            member["role"] = "owner"
            try context.save()
        }
        #expect(summary(try changes(coordinator, after: start)) == [
            "update users email=ann@example.com", "update members login=ann org=acme", "insert users email=cy@example.com",
            "delete users email=bob@example.com", "update members login=ann org=acme",
        ])
    }

    @Test func aChangedKeyIsNamedByItsOldValue() throws {
        let (coordinator, start) = try adopted()
        try ForeignWriter.shell(path, "UPDATE users SET email = 'annie@example.com' WHERE email = 'ann@example.com';")
        let next = try coordinator.currentPersistentHistoryToken()
        try coordinator.execute(BatchUpdateRequest(entityName: "users", predicate: try StorePredicate(format: "email == 'annie@example.com'"), propertiesToUpdate: ["email": "ann@example.org"]))
        for (changes, old, new) in [(try changes(coordinator, after: start).prefix(1), "ann@example.com", "annie@example.com"),
                                    (try changes(coordinator, after: next)[...], "annie@example.com", "ann@example.org")] {
            let change = try #require(changes.first)
            #expect(changes.count == 1 && change.changeType == .update && change.key == ["email": .string(old)])
            #expect(change.updatedProperties.map { "\($0.name) \($0.before?.storedText ?? "-") \($0.after?.storedText ?? "-")" } == ["email \(old) \(new)"])
        }
    }

    /// One transaction's statements changing users twice each: a key changed along `keys`
    /// (with the name), a row inserted under `inserted[0]` and re-keyed to `inserted[1]`, and
    /// the row `deleted` updated, then deleted.
    static func changedTwice(keys: [String], inserted: [String], deleted: String) -> String {
        """
        UPDATE users SET email = '\(keys[1])' WHERE email = '\(keys[0])';
        UPDATE users SET email = '\(keys[2])', name = 'A' WHERE email = '\(keys[1])';
        INSERT INTO users VALUES ('\(inserted[0])', 'New');
        UPDATE users SET email = '\(inserted[1])' WHERE email = '\(inserted[0])';
        UPDATE users SET name = 'B' WHERE email = '\(deleted)';
        DELETE FROM users WHERE email = '\(deleted)';
        """
    }

    @Test func changesCoalescedInATransactionKeepTheKeyTheyNameTheRowBy() throws {
        let (coordinator, start) = try adopted()
        // The shell's transaction: the fold compares the row's start and end.
        try ForeignWriter.shell(path, "BEGIN;\n" + Self.changedTwice(keys: ["ann@example.com", "a2@example.com", "a3@example.com"],
                                                                     inserted: ["dee@example.com", "dee@example.org"], deleted: "bob@example.com") + "\nCOMMIT;")
        #expect(summary(try changes(coordinator, after: start)) == ["update users email=ann@example.com", "insert users email=dee@example.org", "delete users email=bob@example.com"])
        // Tributary's own transaction: the recorder merges a row's second change into its first.
        let next = try coordinator.currentPersistentHistoryToken()
        let store = try #require(coordinator.persistentStores.first)
        try store.write { db in
            try db.execute(Self.changedTwice(keys: ["a3@example.com", "a4@example.com", "a5@example.com"], inserted: ["eve@example.com", "eve@example.org"],
                                             deleted: "dee@example.org"))
        }
        #expect(summary(try changes(coordinator, after: next)) == ["update users email=a3@example.com", "insert users email=eve@example.org", "delete users email=dee@example.org"])
    }

    @Test func theCursorsViewsAndTheChainCarryTheKey() throws {
        let (coordinator, start) = try adopted()
        try ForeignWriter.shell(path, "UPDATE users SET name = 'Annie' WHERE email = 'ann@example.com';")
        let changes = try changes(coordinator, after: start)
        var keys: [[String: AttributeValue]] = []
        try coordinator.enumerateHistoryChanges(.fetchHistory(after: start)) { view in
            keys.append(view.key)
            let copy = try view.copy()
            #expect(copy == changes[view.index])
        }
        #expect(keys == [["email": .string("ann@example.com")]])
        #expect(try coordinator.verifyHistoryChain().problem == nil)
        #expect(try coordinator.fetchHistory(.fetchHistory(after: start)).first?.changes.first?.key == ["email": .string("ann@example.com")])
    }

    @Test func aSnapshotNamesEachRowByItsKeyAsAnInsertDoes() throws {
        let (coordinator, start) = try adopted()
        try ForeignWriter.shell(path, "INSERT INTO users VALUES ('cy@example.com', 'Cy'); INSERT INTO members VALUES ('acme', 'bob', 'member');")
        var objects: [SnapshotObject] = []
        try coordinator.enumerateSnapshot(begin: { _ in }) { objects.append($0) }
        #expect(objects.map { Self.summary($0.objectID.entityName, $0.key) }.sorted() == [
            "counters", "members login=ann org=acme", "members login=bob org=acme",
            "users email=ann@example.com", "users email=bob@example.com", "users email=cy@example.com",
        ])
        for insert in try changes(coordinator, after: start) {
            #expect(objects.first { $0.objectID == insert.changedObjectID }?.key == insert.key, "\(insert.changedObjectID)")
        }
    }

    @Test func adoptingAgainAStoreAdoptedBeforeRecordsTheDeclaredKeyOnce() throws {
        _ = try adopted()
        // The model as a Tributary before this change stored it: no declared keys.
        let stored = try #require(try StoreMetadataReading.model(at: path))
        let model = try ManagedObjectModel(entities: stored.entities.map { entity in
            var older = entity
            older.declaredKey = []
            return older
        })
        let json = String(decoding: model.canonicalJSON(), as: UTF8.self).replacingOccurrences(of: "'", with: "''")
        #expect(!json.contains("declaredKey"))
        try ForeignWriter.shell(path, """
            UPDATE _tributary_metadata SET value = '\(json)' WHERE key = 'model';
            UPDATE _tributary_metadata SET value = '\(model.versionHash)' WHERE key = 'modelHash';
            UPDATE _tributary_history_schema SET model = '\(json)', toVersion = '\(model.versionHash)';
            """)
        let report = try PersistentStoreCoordinator.adoptDatabase(at: path)
        #expect(report.wasAdopted)
        let coordinator = try Fixtures.adoptedCoordinator(path)
        #expect(try coordinator.persistentStores.first?.model.requireEntity("users").declaredKey == ["email"])
        let schemaChanges = try coordinator.fetchHistory(.fetchHistory(after: nil)).compactMap(\.schemaChange).filter { $0.fromVersion != nil }
        #expect(schemaChanges.map(\.changes) == [["changed the declared key of members to (org, login)", "changed the declared key of users to (email)"]])
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        #expect(try coordinator.fetchHistory(.fetchHistory(after: nil)).compactMap(\.schemaChange).filter { $0.fromVersion != nil }.count == 1, "once")
    }
}

/// The model cached in a store's metadata, read with the `sqlite3` shell.
enum StoreMetadataReading {
    static func model(at path: URL) throws -> ManagedObjectModel? {
        let text = try ForeignWriter.shell(path, "SELECT value FROM _tributary_metadata WHERE key = 'model';")
        return try ManagedObjectModel.fromJSON(Data(text.trimmingCharacters(in: .whitespacesAndNewlines).utf8))
    }
}

/// The payload keeps the declared key behind a flag bit of the change's type (history format
/// 7): changes without one are encoded as before, and payloads written before decode as they did.
@Suite struct DeclaredKeyPayloadTests {
    func encoded(_ change: RecordedChange) -> (bytes: [UInt8], names: [String]) {
        var body = ByteWriter()
        var names = NameTable()
        HistoryPayload.encodeChange(change, into: &body, names: &names)
        return (body.bytes, names.strings)
    }

    @Test func aChangeWithoutADeclaredKeyIsEncodedAsBefore() throws {
        // Type 1 (update), entity name 0, key 3 (zigzag 6), no properties: the format 6 bytes.
        let plain = RecordedChange(type: .update, entity: "counters", primaryKey: 3, properties: [])
        #expect(encoded(plain).bytes == [1, 0, 6, 0])
        var reader = ByteReader(bytes: [1, 0, 6, 0])
        let decoded = try HistoryPayload.decodeChange(&reader, names: ["counters"])
        #expect(decoded.type == .update && decoded.primaryKey == 3 && decoded.key.isEmpty)
    }

    @Test func aDeclaredKeyRoundTripsWithALinkAndProperties() throws {
        var change = RecordedChange(type: .update, entity: "members", primaryKey: 3,
                                    properties: [RecordedChange.Property(name: "login", before: .string("ann"), after: .string("annie"))], movedKey: 9)
        change.key = [("org", .string("acme")), ("login", .string("ann"))]
        let (bytes, names) = encoded(change)
        #expect(bytes.first == 1 | HistoryPayload.movedFlag | HistoryPayload.keyFlag)
        var reader = ByteReader(bytes: bytes)
        let decoded = try HistoryPayload.decodeChange(&reader, names: names)
        #expect(decoded.key.map(\.name) == ["org", "login"] && decoded.key.map(\.value) == [.string("acme"), .string("ann")])
        #expect(decoded.movedKey == 9 && decoded.properties.first?.before == .string("ann") && decoded.properties.first?.after == .string("annie"))
        #expect(reader.offset == bytes.count)

        // The stored payload, decoded as history reads it.
        let stored = try HistoryPayload.finish(body: bytes, count: 1, names: { var table = NameTable(); for name in names { _ = table.intern(name) }; return table }())
        let store = UUID()
        let changes = try stored.withUnsafeBytes { try HistoryPayload.decode($0, token: PersistentHistoryToken(value: 1, storeID: store), storeID: store) }
        #expect(changes.first?.key == ["org": .string("acme"), "login": .string("ann")])
        #expect(changes.first?.updatedProperties.map(\.name) == ["login"])
        // A reader that skips the properties meets the next change where it starts.
        var skipping = ByteReader(bytes: bytes + bytes)
        for _ in 0..<2 {
            let header = try HistoryPayload.changeHeader(&skipping, names: names)
            try HistoryPayload.skipProperties(&skipping, count: header.propertyCount)
            #expect(header.keyValues == ["org": .string("acme"), "login": .string("ann")])
        }
        #expect(skipping.offset == 2 * bytes.count)
    }
}
