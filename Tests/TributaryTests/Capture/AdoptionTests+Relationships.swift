import Foundation
import Testing
@testable import Tributary
import TributaryTestSupport

/// Foreign keys of an adopted database become to-one relationships where they can: the app's
/// `notes.owner_id INTEGER REFERENCES users(id)` is `notes.owner_id`, a to-one to `users`, with
/// `users.notes` its inverse; the column stays the user's own.
extension AdoptionTests {
    /// Foreign keys of every kind, beside ``appSchema``'s: two to `users` (cascade, set null),
    /// and ones that stay attributes (to a text key, to a column that is not the key, composite,
    /// to a table keyed by its rowid, to a table not adopted); an untyped one whose inverse's
    /// name (`hits`) is a column of its destination.
    static let relatedSchema = """
        CREATE TABLE comments (id INTEGER PRIMARY KEY, body TEXT,
            author_id INTEGER NOT NULL REFERENCES users ON DELETE CASCADE,
            editor_id INTEGER REFERENCES users(id) ON DELETE SET NULL,
            tag TEXT REFERENCES tags(label), hits_ref INTEGER REFERENCES counters(hits), a INTEGER, b INTEGER,
            note_id INTEGER REFERENCES notes, audit_id INTEGER REFERENCES audits(id),
            FOREIGN KEY (a, b) REFERENCES counters(id, hits));
        CREATE TABLE hits (id INTEGER PRIMARY KEY, counter_id REFERENCES counters);
        INSERT INTO comments (body, author_id, editor_id) VALUES ('by Bob', 2, 1), ('edited by Bob', 1, 2);
        """

    /// `users/2` for an object ID value, else nil.
    func target(_ value: AttributeValue?) -> String? {
        guard case .objectID(let id)? = value else { return nil }
        return "\(id.entityName)/\(id.primaryKey)"
    }

    @Test func foreignKeysToAnAdoptedTablesKeyBecomeRelationshipsAndTheOthersSayWhyNot() throws {
        try makeApp(Self.relatedSchema)
        let before = try dump()
        let report = try PersistentStoreCoordinator.adoptDatabase(at: path)
        let tables = Dictionary(report.tables.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        #expect(tables["notes"]?.attributes == ["body"] && tables["notes"]?.relationships == ["owner_id"])
        #expect(tables["users"]?.relationships == ["comments_author_id", "comments_editor_id", "notes"], "two keys of comments name their inverses by column")
        #expect(tables["comments"]?.relationships == ["author_id", "editor_id"])
        #expect(tables["comments"]?.attributes == ["body", "tag", "hits_ref", "a", "b", "note_id", "audit_id"])
        #expect(tables["counters"]?.relationships == ["hits_counter_id"] && tables["hits"]?.relationships == ["counter_id"], "counters has a column hits")
        #expect(tables["notes"]?.notes.contains("owner_id → users is a to-one relationship; its inverse is users.notes, delete rule deny (ON DELETE NO ACTION)") == true,
                "\(tables["notes"]?.notes ?? [])")
        let notes = (tables["comments"]?.notes ?? []).joined(separator: "\n")
        for why in ["foreign key tag → tags stays an attribute: tags has no INTEGER PRIMARY KEY",
                    "foreign key hits_ref → counters stays an attribute: it references counters.hits, not its INTEGER PRIMARY KEY id",
                    "foreign key a, b → counters stays attributes: it is a composite key",
                    "foreign key note_id → notes stays an attribute: notes has no INTEGER PRIMARY KEY",
                    "foreign key audit_id → audits stays an attribute: audits is not adopted"] {
            #expect(notes.contains(why), "\(why) in \(notes)")
        }

        let model = try #require(try open().persistentStores.first?.model)
        let users = try model.requireEntity("users"), comments = try model.requireEntity("comments")
        #expect(users.relationship(named: "notes") == RelationshipDescription(name: "notes", destinationEntity: "notes", inverseName: "owner_id", isToMany: true, deleteRule: .deny))
        #expect(try model.requireEntity("notes").relationship(named: "owner_id") == RelationshipDescription(name: "owner_id", destinationEntity: "users", inverseName: "notes"))
        #expect(users.relationship(named: "comments_author_id")?.deleteRule == .cascade && users.relationship(named: "comments_editor_id")?.deleteRule == .nullify)
        #expect(comments.relationship(named: "author_id")?.isOptional == false && comments.relationship(named: "editor_id")?.isOptional == true, "NOT NULL makes it required")

        _ = try PersistentStoreCoordinator.undoAdoption(at: path)
        #expect(try dump() == before, "nothing was added to the user's tables")
    }

    @Test func aShellUpdateOfAForeignKeyIsARelationshipChangeToTheOtherObject() throws {
        let (coordinator, start) = try adoptedApp()
        try ForeignWriter.shell(path, "BEGIN; UPDATE notes SET owner_id = 2 WHERE body = 'hello'; INSERT INTO notes (body, owner_id) VALUES ('mine', 1); COMMIT;")
        let transactions = try coordinator.fetchHistory(.fetchHistory(after: start))
        let changes = transactions.flatMap(\.changes)
        #expect(transactions.map(\.processName) == ["foreign"] && changes.count == 2, "\(changes)")
        let update = changes.first { $0.changeType == .update }
        #expect(target(properties(update)["owner_id"]?.before) == "users/1" && target(properties(update)["owner_id"]?.after) == "users/2", "\(properties(update))")
        #expect(target(properties(changes.first { $0.changeType == .insert })["owner_id"]?.after) == "users/1")
    }

    @Test func aFetchGoesThroughTheRelationshipBothWays() throws {
        try makeApp("INSERT INTO notes (body, owner_id) VALUES ('orphan', NULL);")
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        let coordinator = try open()
        func bodies(_ format: String) throws -> [String] {
            try coordinator.fetch(FetchRequest(entityName: "notes", predicate: try StorePredicate(format: format))).map { $0["body"]?.stringValue ?? "" }
        }
        #expect(try bodies("owner_id.name == 'Ann'") == ["hello"])
        #expect(try bodies("owner_id.email == 'bob@example.com'").isEmpty && bodies("owner_id == nil") == ["orphan"])
        let users = try coordinator.fetch(FetchRequest(entityName: "users", predicate: try StorePredicate(format: "ANY notes.body == 'hello'")))
        #expect(users.map { $0.objectID.primaryKey } == [1])
        let none = try coordinator.fetch(FetchRequest(entityName: "users", predicate: try StorePredicate(format: "notes.@count == 0")))
        #expect(none.map { $0.objectID.primaryKey } == [2])
        let hello = try coordinator.fetch(FetchRequest(entityName: "notes", predicate: try StorePredicate(format: "body == 'hello'")))
        #expect(target(hello.first?["owner_id"]) == "users/1")
    }

    @Test func aContextSettingTheRelationshipWritesTheColumnAndHistoryOnce() throws {
        try makeApp()
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        let coordinator = try open()
        let bob = try #require(try coordinator.fetch(FetchRequest(entityName: "users", predicate: try StorePredicate(format: "name == 'Bob'"))).first?.objectID)
        let note = try #require(try coordinator.fetch(FetchRequest(entityName: "notes")).first?.objectID)
        let start = try coordinator.currentPersistentHistoryToken()
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let members = try context.performAndWait {
            try context.existingObject(with: note).setValue(.objectID(bob), forKey: "owner_id")
            try context.save()
            return try context.existingObject(with: bob).value(forKey: "notes")
        }
        #expect(members == .array([.objectID(note)]), "the inverse follows: \(members)")
        #expect(try ForeignWriter.shell(path, "SELECT owner_id FROM notes;") == "2\n")
        let transactions = try open().fetchHistory(.fetchHistory(after: start))
        #expect(transactions.count == 1 && transactions[0].changes.count == 1, "\(transactions.map { "\($0.processName): \($0.changes)" })")
        #expect(target(properties(transactions.first?.changes.first)["owner_id"]?.after) == "users/2")
    }

    @Test func batchRequestsSetTheRelationshipFromEitherEnd() throws {
        try makeApp()
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        let coordinator = try open()
        let users = try coordinator.fetch(FetchRequest(entityName: "users", sortDescriptors: [SortDescriptor("email")])).map(\.objectID)
        var insert = BatchInsertRequest(entityName: "notes", objects: [["body": .string("batch"), "owner_id": .objectID(users[1])]])
        insert.resultType = .objectIDs
        let inserted = try coordinator.execute(insert).objectIDs
        #expect(try ForeignWriter.shell(path, "SELECT body, owner_id FROM notes ORDER BY rowid;") == "hello|1\nbatch|2\n")
        var update = BatchUpdateRequest(entityName: "users", predicate: try StorePredicate(format: "name == 'Ann'"))
        update.addedLinks = ["notes": inserted]
        try coordinator.execute(update)
        #expect(try ForeignWriter.shell(path, "SELECT owner_id FROM notes ORDER BY rowid;") == "1\n1\n", "the to-many end writes the other table's column")
        let moved = try coordinator.fetchHistory(.fetchHistory(after: nil)).last?.changes ?? []
        #expect(moved.count == 1 && target(properties(moved.first)["owner_id"]?.after) == "users/1", "\(moved)")
    }

    @Test func deleteRulesFollowOnDelete() throws {
        try makeApp(Self.relatedSchema)
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        let coordinator = try open()
        let ann = try StorePredicate(format: "name == 'Ann'")
        let denied = try #require(throws: TributaryError.self) { try coordinator.execute(BatchDeleteRequest(entityName: "users", predicate: ann)) }
        #expect(denied.code == .deleteDenied && denied.message.contains("its 'notes' still has notes objects and the rule is deny"), "\(denied.message)")
        #expect(denied.hint?.contains("delete or move the related notes objects first") == true)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let annID = try #require(try coordinator.fetch(FetchRequest(entityName: "users", predicate: ann)).first?.objectID)
        let refused = try #require(throws: TributaryError.self) {
            try context.performAndWait {
                context.delete(try context.existingObject(with: annID))
                try context.save()
            }
        }
        #expect(refused.code == .deleteDenied, "\(refused.message)")
        #expect(try ForeignWriter.shell(path, "SELECT count(*) FROM users;") == "2\n")
        // Bob wrote one comment (cascade) and edited Ann's (set null).
        try coordinator.execute(BatchDeleteRequest(entityName: "users", predicate: try StorePredicate(format: "name == 'Bob'")))
        #expect(try ForeignWriter.shell(path, "SELECT body, author_id, editor_id FROM comments;") == "edited by Bob|1|\n")
    }

    @Test func aDatabaseAdoptedBeforeRelationshipsGetsThemWhenAdoptedAgain() throws {
        try makeApp()
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        let old = try Self.withoutRelationships(try #require(try open().persistentStores.first?.model))
        try Self.replaceModel(with: old, at: path)
        do {
            let earlier = try open()
            #expect(earlier.persistentStores.first?.model.entity(named: "notes")?.attribute(named: "owner_id")?.type == .integer, "as adopted before")
            try ForeignWriter.shell(path, "UPDATE notes SET owner_id = 2;")
            let folded = try earlier.fetchHistory(.fetchHistory(after: nil)).flatMap(\.changes)
            #expect(properties(folded.first)["owner_id"]?.after == .integer(2), "an integer then: \(folded)")
        }
        let again = try PersistentStoreCoordinator.adoptDatabase(at: path)
        #expect(again.wasAdopted && again.tables.first { $0.name == "notes" }?.relationships == ["owner_id"])
        let coordinator = try open()
        let change = try #require(try coordinator.fetchHistory(.fetchHistory(after: nil)).compactMap(\.schemaChange).last)
        #expect(change.changes == ["changed notes.owner_id from integer to a relationship to users", "added users.notes"], "\(change.changes)")
        let start = try coordinator.currentPersistentHistoryToken()
        try ForeignWriter.shell(path, "UPDATE notes SET owner_id = 1;")
        let after = try coordinator.fetchHistory(.fetchHistory(after: start)).flatMap(\.changes)
        #expect(target(properties(after.first)["owner_id"]?.before) == "users/2" && target(properties(after.first)["owner_id"]?.after) == "users/1", "\(after)")
        #expect(try PersistentStoreCoordinator.adoptDatabase(at: path).wasAdopted)
        let all = try open().fetchHistory(.fetchHistory(after: nil))
        #expect(all.compactMap(\.schemaChange).count == 1, "adopting once more changes nothing: \(all.map { "\($0.processName) \($0.contextName ?? "")" })")
    }

    /// `model` as Tributary adopted it before foreign keys were relationships: each to-one an
    /// integer attribute of the column's name, no to-many inverse.
    static func withoutRelationships(_ model: ManagedObjectModel) throws -> ManagedObjectModel {
        try ManagedObjectModel(entities: model.entities.map { entity in
            var entity = entity
            entity.attributes += entity.relationships.filter { !$0.isToMany }.map { AttributeDescription(name: $0.name, type: .integer, isOptional: $0.isOptional) }
            entity.relationships = []
            return entity
        })
    }

    /// Writes `model` as the adopted store's model and its schema history's baseline.
    static func replaceModel(with model: ManagedObjectModel, at path: URL) throws {
        let json = String(decoding: model.canonicalJSON(), as: UTF8.self).replacingOccurrences(of: "'", with: "''")
        try ForeignWriter.shell(path, """
            UPDATE _tributary_metadata SET value = '\(json)' WHERE key = 'model';
            UPDATE _tributary_metadata SET value = '\(model.versionHash)' WHERE key = 'modelHash';
            UPDATE _tributary_history_schema SET model = '\(json)', toVersion = '\(model.versionHash)';
            """)
    }

    @Test func relationshipsThatWouldChangeAnAdoptedTableAreRefusedWithTheFix() throws {
        func adopted(_ name: String, _ relationships: [RelationshipDescription]) -> EntityDescription {
            var entity = EntityDescription(name: name, relationships: relationships)
            entity.tableKey = "id"
            return entity
        }
        let cases: [([EntityDescription], String, String)] = [
            ([adopted("posts", [RelationshipDescription(name: "tags", destinationEntity: "tags", inverseName: "posts", isToMany: true)]),
              adopted("tags", [RelationshipDescription(name: "posts", destinationEntity: "posts", inverseName: "tags", isToMany: true)])],
             "a many-to-many relationship needs a join table", "make the join table in the database"),
            ([adopted("users", [RelationshipDescription(name: "profile", destinationEntity: "profiles", inverseName: "user")]),
              adopted("profiles", [RelationshipDescription(name: "user", destinationEntity: "users", inverseName: "profile")])],
             "a one-to-one relationship keeps its key in one of the two tables", "make profiles.user to-many"),
            ([adopted("notes", [RelationshipDescription(name: "owner", destinationEntity: "users", inverseName: "notes")]),
              EntityDescription(name: "users", relationships: [RelationshipDescription(name: "notes", destinationEntity: "notes", inverseName: "owner", isToMany: true)])],
             "a relationship between an adopted table and a table Tributary made", "relate adopted tables only to adopted tables"),
        ]
        for (entities, message, hint) in cases {
            let error = try #require(throws: TributaryError.self) { try ManagedObjectModel(entities: entities) }
            #expect(error.message.contains(message) && error.hint?.contains(hint) == true && error.location?.contains(".") == true,
                    "\(error.location ?? ""): \(error.message) (\(error.hint ?? ""))")
        }
    }
}
