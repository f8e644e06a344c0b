import Foundation
import Testing
@testable import Tributary
import TributaryTestSupport

/// Foreign keys that are not as tidy as `notes.owner_id`: a column holding text, a key to
/// its own table in a column named after the table, `SET NULL` on a `NOT NULL` column, a
/// column in two keys.
extension AdoptionTests {
    @Test func aForeignKeyColumnHoldingTextStaysAnAttributeAndSaysWhy() throws {
        try makeApp("INSERT INTO notes (body, owner_id) VALUES ('blank', ''), ('odd', 'x');")
        let report = try PersistentStoreCoordinator.adoptDatabase(at: path)
        let notes = try #require(report.tables.first { $0.name == "notes" })
        #expect(notes.relationships.isEmpty && notes.attributes == ["body", "owner_id"] && report.tables.first { $0.name == "users" }?.relationships == [])
        #expect(notes.notes.contains("foreign key owner_id → users stays an attribute: owner_id holds '', which is not a key (a relationship's column holds integers and NULLs)"),
                "\(notes.notes)")
        let coordinator = try open()
        let start = try coordinator.currentPersistentHistoryToken()
        try ForeignWriter.shell(path, "INSERT INTO notes (body, owner_id) VALUES ('later', 'x');")
        let inserted = try coordinator.fetchHistory(.fetchHistory(after: start)).flatMap(\.changes)
        #expect(inserted.count == 1 && target(properties(inserted.first)["owner_id"]?.after) == nil, "the value as stored, no object ID: \(inserted)")
    }

    @Test func textAnotherProgramWritesIntoARelationshipsColumnIsRecordedAsNilWithAGapSayingSo() throws {
        let (coordinator, start) = try adoptedApp()
        try ForeignWriter.shell(path, "BEGIN; UPDATE notes SET owner_id = 'x' WHERE body = 'hello'; INSERT INTO notes (body, owner_id) VALUES ('blank', ''); COMMIT;")
        let transactions = try coordinator.fetchHistory(.fetchHistory(after: start))
        #expect(transactions.map(\.processName) == ["foreign", "capture gap"], "\(transactions.map { "\($0.processName) \($0.contextName ?? "")" })")
        let changes = transactions.first?.changes ?? []
        let update = changes.first { $0.changeType == .update }, insert = changes.first { $0.changeType == .insert }
        #expect(target(properties(update)["owner_id"]?.before) == "users/1", "\(changes)")
        for after in [properties(update)["owner_id"]?.after, properties(insert)["owner_id"]?.after] {
            #expect(after == nil || after == .null, "never a value an object ID cannot carry: \(changes)")
        }
        let line = transactions.last?.contextName ?? ""
        #expect(line.contains("not keys of users") && line.contains("notes/p1 owner_id = 'x'") && line.contains("notes/p2 owner_id = ''"), "\(line)")
        #expect(transactions.last?.changes.isEmpty == true)
        let read = try coordinator.fetch(FetchRequest(entityName: "notes", sortDescriptors: [SortDescriptor("body")])).map { $0["owner_id"] }
        #expect(read.count == 2 && read.allSatisfy { $0 == nil || $0 == .null }, "a fetch (and a snapshot) reads no object there either, not users/p0: \(read)")
        let nilOwners = try coordinator.count(for: FetchRequest(entityName: "notes", predicate: try StorePredicate(format: "owner_id == nil")))
        let owned = try coordinator.count(for: FetchRequest(entityName: "notes", predicate: try StorePredicate(format: "owner_id != nil")))
        #expect(nilOwners == 2 && owned == 0, "a predicate reads them as a fetch does: nil")
        try ForeignWriter.shell(path, "UPDATE notes SET owner_id = 2 WHERE body = 'hello';")
        let back = try coordinator.fetchHistory(.fetchHistory(after: transactions.last?.token)).flatMap(\.changes)
        #expect(target(properties(back.first)["owner_id"]?.after) == "users/2" && properties(back.first)["owner_id"]?.before == .null, "\(back)")
    }

    /// The self-referencing key of a category tree, in a column named after its table.
    static let categorySchema = """
        CREATE TABLE category (id INTEGER PRIMARY KEY, name TEXT, category INTEGER REFERENCES category(id));
        INSERT INTO category VALUES (1, 'root', NULL), (2, 'leaf', 1);
        """

    @Test func aKeyToItsOwnTableInAColumnNamedAfterTheTableGivesTheInverseAFreeName() throws {
        try makeApp(Self.categorySchema)
        let report = try PersistentStoreCoordinator.adoptDatabase(at: path)
        #expect(report.tables.first { $0.name == "category" }?.relationships == ["category", "category_category"])
        let coordinator = try open()
        let leaves = try coordinator.fetch(FetchRequest(entityName: "category", predicate: try StorePredicate(format: "category.name == 'root'")))
        #expect(leaves.map { $0["name"] } == [.string("leaf")])
    }

    @Test func aSelfReferencingTableAnotherProgramMakesIsRecordedAsADetectedSchemaChange() throws {
        try makeApp()
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        let start = try open().currentPersistentHistoryToken()
        try ForeignWriter.shell(path, Self.categorySchema)
        try open().execute(BatchUpdateRequest(entityName: "users", predicate: try StorePredicate(format: "name == 'Bob'"), propertiesToUpdate: ["name": .string("Robert")]))
        let detected = try open().fetchHistory(.fetchHistory(after: start)).compactMap(\.schemaChange)
        #expect(detected.count == 1 && detected.first?.isDetected == true && detected.first?.changes.contains("added entity category") == true, "\(detected)")
    }

    @Test func anInverseNameTheModelWouldRefuseIsNamedAfterTheColumnInstead() throws {
        // Two keys of `_` to users would name their inverses `__a` and `__b`: a prefix Tributary
        // keeps for itself. Before the fix, users was refused as an entity the model refuses.
        try makeApp("CREATE TABLE \"_\" (id INTEGER PRIMARY KEY, a INTEGER REFERENCES users, b INTEGER REFERENCES users); INSERT INTO \"_\" VALUES (1, 1, NULL);")
        let report = try PersistentStoreCoordinator.adoptDatabase(at: path)
        #expect(report.tables.first { $0.name == "users" }?.relationships == ["inverse_a", "inverse_b", "notes"], "\(report.tables)")
        let coordinator = try open()
        let users = try coordinator.fetch(FetchRequest(entityName: "users", predicate: try StorePredicate(format: "ANY inverse_a != nil")))
        #expect(users.map(\.objectID.primaryKey) == [1], "the relationship works under its name")
    }

    @Test func inferredEntitiesAreCheckedTableByTable() throws {
        func adopted(_ name: String, _ attributes: [String], _ relationships: [RelationshipDescription] = []) -> EntityDescription {
            var entity = EntityDescription(name: name, attributes: attributes.map { AttributeDescription(name: $0, type: .string) }, relationships: relationships)
            entity.tableKey = "id"
            return entity
        }
        let fine = [adopted("users", ["name"], [RelationshipDescription(name: "notes", destinationEntity: "notes", inverseName: "owner", isToMany: true)]),
                    adopted("notes", [], [RelationshipDescription(name: "owner", destinationEntity: "users", inverseName: "notes")])]
        #expect(try InferredModelCheck.problems(of: fine).isEmpty)
        let problems = try InferredModelCheck.problems(of: fine + [adopted("twice", ["x", "X"])])
        #expect(problems.map(\.table) == ["twice"] && problems.first?.why.contains("property 'X' is declared twice") == true, "\(problems)")
    }

    @Test func setNullOnANotNullColumnDeniesTheDeleteRatherThanFailInSQLite() throws {
        try makeApp("CREATE TABLE posts (id INTEGER PRIMARY KEY, author_id INTEGER NOT NULL REFERENCES users ON DELETE SET NULL); INSERT INTO posts VALUES (1, 2);")
        let report = try PersistentStoreCoordinator.adoptDatabase(at: path)
        let note = report.tables.first { $0.name == "posts" }?.notes.first { $0.hasPrefix("author_id → users") } ?? ""
        #expect(note.contains("delete rule deny (ON DELETE SET NULL): author_id is NOT NULL"), "\(note)")
        let coordinator = try open()
        #expect(coordinator.persistentStores.first?.model.entity(named: "users")?.relationship(named: "posts")?.deleteRule == .deny)
        let denied = try #require(throws: TributaryError.self) {
            try coordinator.execute(BatchDeleteRequest(entityName: "users", predicate: try StorePredicate(format: "name == 'Bob'")))
        }
        #expect(denied.code == .deleteDenied, "\(denied.code): \(denied.message)")
        #expect(try ForeignWriter.shell(path, "SELECT count(*) FROM users; SELECT author_id FROM posts;") == "2\n2\n")
    }

    @Test func aColumnInTwoForeignKeysIsOneRelationshipAndTheOtherKeySaysWhy() throws {
        try makeApp("""
            CREATE TABLE a (id INTEGER PRIMARY KEY);
            CREATE TABLE b (id INTEGER PRIMARY KEY, u INTEGER, FOREIGN KEY (u) REFERENCES users, FOREIGN KEY (u) REFERENCES a);
            CREATE TABLE c (id INTEGER PRIMARY KEY, u INTEGER REFERENCES users, FOREIGN KEY (u) REFERENCES users(id));
            """)
        let report = try PersistentStoreCoordinator.adoptDatabase(at: path)
        let tables = Dictionary(report.tables.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        #expect(tables["b"]?.relationships == ["u"] && tables["a"]?.relationships == [], "the key declared first")
        #expect(tables["b"]?.notes.contains("foreign key u → a stays an attribute: u is in a foreign key to users already, declared first") == true, "\(tables["b"]?.notes ?? [])")
        #expect(tables["c"]?.notes.contains("foreign key u → users stays an attribute: u is in a foreign key to users already, declared first") == true, "\(tables["c"]?.notes ?? [])")
        #expect(tables["users"]?.relationships == ["b", "c", "notes"], "a repeated key is no second key to users: \(tables["users"]?.relationships ?? [])")
    }
}
