import Foundation
import Testing
@testable import Tributary

/// Explicit migrations (`allowsExplicitMigration`, `migrateStore(at:to:dryRun:)`): renames
/// keep values and object IDs, removals drop, conversions convert or stop at the first row
/// that does not, all in one transaction.
@Suite struct ExplicitMigrationTests {
    let dir = TemporaryDirectory()
    var url: URL { dir.file("m.sqlite") }

    static func notes() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("Note") {
                Attribute("title", .string, optional: false).unique()
                Attribute("body", .string)
                Attribute("views", .integer)
                Attribute("score", .string)
                Attribute("legacy", .string)
                FetchIndex("legacy")
            }
        }
    }

    /// A store of `model` holding `rows` notes.
    func makeStore(_ model: ManagedObjectModel, _ rows: [[String: AttributeValue]], history: Bool = false) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let description = PersistentStoreDescription(url: url)
        description.persistentHistoryTracking = history
        let store = try coordinator.addPersistentStore(with: description)
        if !rows.isEmpty { try coordinator.execute(BatchInsertRequest(entityName: model.entities[0].name, objects: rows)) }
        coordinator.remove(store)
    }

    /// Opens the store with `model`, migrating explicitly.
    func openExplicitly(_ model: ManagedObjectModel) throws -> (PersistentStoreCoordinator, PersistentStore) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let description = PersistentStoreDescription(url: url)
        description.allowsExplicitMigration = true
        return (coordinator, try coordinator.addPersistentStore(with: description))
    }

    func columns(_ table: String) throws -> [String] {
        let db = try Connection(path: url.path, options: ConnectionOptions(readOnly: true))
        let statement = try db.makeStatement("SELECT name FROM pragma_table_info('\(table)') ORDER BY cid")
        var names: [String] = []
        while try statement.step() { names.append(statement.string(at: 0)) }
        return names
    }

    /// The names of the indexes on `table` that SQLite does not make itself.
    func indexes(on table: String) throws -> [String] {
        let db = try Connection(path: url.path, options: ConnectionOptions(readOnly: true))
        let statement = try db.makeStatement("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL ORDER BY name")
        try statement.bind([.string(table)])
        var names: [String] = []
        while try statement.step() { names.append(statement.string(at: 0)) }
        return names
    }

    /// The store's schema and every row of every table, as text.
    func snapshot() throws -> [String] {
        let db = try Connection(path: url.path, options: ConnectionOptions(readOnly: true))
        var lines: [String] = []
        let master = try db.makeStatement("SELECT type, name, sql FROM sqlite_master ORDER BY type, name")
        var tables: [String] = []
        while try master.step() {
            lines.append("\(master.string(at: 0)) \(master.string(at: 1)): \(master.optionalString(at: 2) ?? "")")
            if master.string(at: 0) == "table" { tables.append(master.string(at: 1)) }
        }
        for table in tables {
            let rows = try db.makeStatement("SELECT * FROM \(quote(table))")
            while try rows.step() {
                lines.append(table + ": " + (0..<rows.columnCount).map { "\(rows.value(at: $0))" }.joined(separator: "|"))
            }
        }
        return lines
    }

    // MARK: Renames

    @Test func renamingAnAttributeKeepsItsValues() throws {
        try makeStore(try Self.notes(), [["title": "a", "body": "first"], ["title": "b", "body": "second"]])
        let v2 = try ManagedObjectModel(yaml: """
            entities:
              Note:
                attributes:
                  title: { type: string, optional: false, unique: true }
                  content: { type: string, renamedFrom: body }
                  views: integer
                  score: string
                  legacy: string
                indexes: [[legacy]]
            """)
        let (coordinator, store) = try openExplicitly(v2)
        #expect(store.migrationChanges == ["renamed Note.body to Note.content"])
        let rows = try coordinator.fetch(FetchRequest(entityName: "Note", sortDescriptors: [SortDescriptor("title")]))
        #expect(rows.map { $0["content"] } == [.string("first"), .string("second")])
        #expect(try columns("Note").contains("content") && !(try columns("Note")).contains("body"))
        // The store caches the new model: opening it again with that model migrates nothing.
        coordinator.remove(store)
        #expect(try openExplicitly(v2).1.migrationChanges.isEmpty)
    }

    @Test func renamingAnEntityKeepsItsRowsObjectIDsAndLinks() throws {
        let description = PersistentStoreDescription(url: url)
        let blog = try Fixtures.blogCoordinator(description)
        let (tagIDs, postIDs) = try Fixtures.seedBlog(blog, posts: 6)
        blog.remove(blog.persistentStores[0])

        // Tag becomes Label: the many-to-many join table's sides change order (Label < Post).
        let (coordinator, store) = try openExplicitly(try BlogV2.model())
        #expect(store.migrationChanges == ["renamed entity Tag to Label", "renamed Post.content to Post.text"])
        let labels = try coordinator.fetch(FetchRequest(entityName: "Label", sortDescriptors: [SortDescriptor("name")]))
        #expect(labels.map(\.objectID.primaryKey).sorted() == tagIDs.map(\.primaryKey).sorted(), "same primary keys")
        #expect(labels.map { $0["postCount"] } == [.integer(2), .integer(2), .integer(2)], "the derived count reads the renamed join table")
        let swift = try #require(labels.first { $0["name"] == .string("swift") })
        #expect(try coordinator.count(for: FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "ANY tags.name == 'swift'"))) == 2)
        // A new link through the swapped join table counts on the right side.
        var link = BatchUpdateRequest(entityName: "Post", propertiesToUpdate: [:])
        link.objectIDs = [postIDs[1]]
        link.addedLinks = ["tags": [swift.objectID]]
        try coordinator.execute(link)
        let count = try coordinator.fetch(FetchRequest(entityName: "Label", predicate: try StorePredicate(format: "name == 'swift'")))[0]["postCount"]
        #expect(count == .integer(3))
        #expect(try Set(columns("_Label_posts")) == ["src", "dst"])
        #expect(try columns("Tag").isEmpty && columns("_Post_tags").isEmpty)
        #expect(try indexes(on: "_Label_posts") == ["_Label_posts_dst"])
        #expect(try indexes(on: "Label") == ["Label_unique_name"])
    }

    // MARK: Removals and conversions

    @Test func droppingAnAttributeRemovesItsColumnAndIndex() throws {
        try makeStore(try Self.notes(), [["title": "a", "legacy": "old", "views": 3]])
        let v2 = try ManagedObjectModel {
            Entity("Note") {
                Attribute("title", .string, optional: false).unique()
                Attribute("body", .string)
                Attribute("views", .integer)
                Attribute("score", .string)
            }
        }
        let (coordinator, store) = try openExplicitly(v2)
        #expect(store.migrationChanges == ["removed Note.legacy", "removed index Note(legacy)"])
        #expect(try columns("Note") == ["_pk", "_version", "title", "body", "views", "score"])
        #expect(try coordinator.fetch(FetchRequest(entityName: "Note"))[0]["views"] == .integer(3))
        // The unique index was made again, the dropped column's is gone.
        #expect(try indexes(on: "Note") == ["Note_unique_title"])
    }

    @Test func integersBecomeDoublesAndNumericStringsIntegers() throws {
        try makeStore(try Self.notes(), [["title": "a", "views": 3, "score": "42"], ["title": "b", "views": -7, "score": " 7 "], ["title": "c"]])
        let v2 = try ManagedObjectModel {
            Entity("Note") {
                Attribute("title", .string, optional: false).unique()
                Attribute("body", .string)
                Attribute("views", .double)
                Attribute("score", .integer)
                Attribute("legacy", .string)
                FetchIndex("legacy")
            }
        }
        let (coordinator, store) = try openExplicitly(v2)
        #expect(store.migrationChanges == ["changed Note.views from integer to double", "changed Note.score from string to integer"])
        let rows = try coordinator.fetch(FetchRequest(entityName: "Note", sortDescriptors: [SortDescriptor("title")]))
        #expect(rows.map { $0["views"] } == [.double(3), .double(-7), .null])
        #expect(rows.map { $0["score"] } == [.integer(42), .integer(7), .null])
        let db = try Connection(path: url.path, options: ConnectionOptions(readOnly: true))
        #expect(try db.scalar("SELECT group_concat(typeof(views) || ':' || typeof(score)) FROM Note ORDER BY title")?.stringValue == "real:integer,real:integer,null:null")
        #expect(try db.scalar("SELECT type FROM pragma_table_info('Note') WHERE name = 'views'")?.stringValue == "REAL")
    }

    @Test func aValueThatDoesNotConvertStopsTheMigrationAndLeavesTheStoreAsItWas() throws {
        try makeStore(try Self.notes(), [["title": "a", "score": "1"], ["title": "b", "score": "2"], ["title": "c", "score": "3 apples"]])
        let before = try snapshot()
        let bytes = try Data(contentsOf: url)
        let v2 = try ManagedObjectModel {
            Entity("Note") {
                Attribute("title", .string, optional: false).unique()
                Attribute("content", .string).renamed(from: "body")     // runs before the conversion
                Attribute("views", .double)                              // converts before it too
                Attribute("score", .integer)
            }
        }
        let error = try #require(throws: TributaryError.self) { _ = try openExplicitly(v2) }
        #expect(error.code == .typeMismatch)
        #expect(error.message.contains("cannot change Note.score from string to integer"))
        #expect(error.message.hasSuffix("/Note/p3 holds \"3 apples\""), "names the last row: \(error.message)")
        #expect(error.hint?.contains("change or clear that value") == true)
        #expect(try snapshot() == before)
        #expect(try Data(contentsOf: url) == bytes)
        #expect(try PersistentStoreCoordinator().addPersistentStore(with: PersistentStoreDescription(url: url)).model == (try Self.notes()))
    }

    @Test func withoutExplicitMigrationOpeningRefusesAndSaysHowToMigrate() throws {
        try makeStore(try Self.notes(), [["title": "a", "body": "x"]])
        let renamed = try ManagedObjectModel {
            Entity("Note") {
                Attribute("title", .string, optional: false).unique()
                Attribute("content", .string).renamed(from: "body")
                Attribute("views", .integer)
                Attribute("score", .string)
                Attribute("legacy", .string)
                FetchIndex("legacy")
            }
        }
        let error = try #require(throws: TributaryError.self) {
            try PersistentStoreCoordinator(managedObjectModel: renamed).addPersistentStore(with: PersistentStoreDescription(url: url))
        }
        #expect(error.code == .incompatibleModel)
        #expect(error.message.contains("it renames Note.body to Note.content"))
        #expect(error.hint?.contains("run tributary migrate STORE --model NEW.yml") == true)
        #expect(try columns("Note").contains("body"))
    }

    @Test func changesNoMigrationCanMakeAreRefusedWithWhatToDo() throws {
        try makeStore(try Self.notes(), [["title": "a"]])
        func refusal(_ model: ManagedObjectModel) throws -> TributaryError {
            try #require(throws: TributaryError.self) { _ = try openExplicitly(model) }
        }
        let binary = try refusal(try ManagedObjectModel { Entity("Note") { Attribute("title", .binary, optional: false).unique() } })
        #expect(binary.message.contains("Note.title changed type from string to binary"))
        #expect(binary.hint?.contains("SQLite cannot convert string values to binary") == true)
        let required = try refusal(try ManagedObjectModel {
            Entity("Note") { Attribute("title", .string, optional: false).unique(); Attribute("rank", .integer, optional: false) }
        })
        #expect(required.message.contains("new attribute Note.rank is required and has no default"))
        #expect(required.hint == "give it a default or make it optional")
        let typo = try refusal(try ManagedObjectModel { Entity("Note") { Attribute("title", .string, optional: false).unique(); Attribute("text", .string).renamed(from: "bdy") } })
        #expect(typo.message.contains("renamedFrom 'bdy' names no attribute of Note"))
        #expect(try columns("Note").contains("body"))
    }

    @Test func aDryRunPlansChecksAndWritesNothing() throws {
        try makeStore(try Self.notes(), [["title": "a", "views": 1, "body": "x"]], history: true)
        let bytes = try Data(contentsOf: url)
        let v2 = try ManagedObjectModel { Entity("Note") { Attribute("title", .string, optional: false).unique(); Attribute("views", .double) } }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: v2)
        let plan = try coordinator.migrationPlan(at: url, dryRun: true)
        #expect(plan.changes == ["removed Note.body", "changed Note.views from integer to double", "removed Note.score", "removed Note.legacy", "removed index Note(legacy)"])
        #expect(plan.statements.contains("ALTER TABLE \"Note\" DROP COLUMN \"body\";"))
        #expect(try Data(contentsOf: url) == bytes)
        #expect(try columns("Note").contains("body"))
        // The real run does what the dry run said.
        #expect(try coordinator.migrateStore(at: url) == plan.changes)
        #expect(try columns("Note") == ["_pk", "_version", "title", "views"])
        #expect(try coordinator.migrateStore(at: url, dryRun: true).isEmpty)
    }

    @Test func aDryRunFindsTheRowThatWouldStopIt() throws {
        try makeStore(try Self.notes(), [["title": "a", "score": "x1"]])
        let v2 = try ManagedObjectModel { Entity("Note") { Attribute("title", .string, optional: false).unique(); Attribute("score", .integer) } }
        let error = try #require(throws: TributaryError.self) { try PersistentStoreCoordinator(managedObjectModel: v2).migrateStore(at: url, dryRun: true) }
        #expect(error.message.contains("/Note/p1 holds \"x1\""))
        #expect(error.location == url.path)
    }

    @Test func anAdoptedDatabaseIsNeverMigrated() throws {
        let raw = try Connection(path: url.path, options: ConnectionOptions())
        try raw.execute("CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT)")
        _ = try PersistentStoreCoordinator.adoptDatabase(at: url)
        let model = try ManagedObjectModel { Entity("people") { Attribute("fullName", .string).renamed(from: "name") } }
        let error = try #require(throws: TributaryError.self) { try PersistentStoreCoordinator(managedObjectModel: model).migrateStore(at: url) }
        #expect(error.message.contains("adopted database"))
        #expect(error.hint?.contains("tributary adopt") == true)
        #expect(try columns("people") == ["id", "name"])
    }

    // MARK: Derived attributes

    /// The derived-fixtures store with one author, opened again with `model` explicitly.
    func migrateDerivedStore(to model: ManagedObjectModel) throws -> (PersistentStoreCoordinator, PersistentStore) {
        let first = PersistentStoreCoordinator(managedObjectModel: try DerivedFixtures.model())
        try first.addPersistentStore(with: PersistentStoreDescription(url: url))
        try first.execute(BatchInsertRequest(entityName: "Author", objects: [["name": "Ann"]]))
        first.remove(first.persistentStores[0])
        return try openExplicitly(model)
    }

    /// The derived fixtures' model with Post.`old` renamed to `new` (and what reads it, told by `derivations`).
    func derivedModel(renaming old: String, to new: String, derivations: [String: Derivation] = [:]) throws -> ManagedObjectModel {
        var entities = try DerivedFixtures.model().entities
        for e in entities.indices {
            for a in entities[e].attributes.indices {
                if entities[e].name == "Post" && entities[e].attributes[a].name == old {
                    entities[e].attributes[a].name = new
                    entities[e].attributes[a].renamingIdentifier = old
                }
                if let derivation = derivations["\(entities[e].name).\(entities[e].attributes[a].name)"] { entities[e].attributes[a].derivation = derivation }
            }
            entities[e].uniquenessConstraints = entities[e].uniquenessConstraints.map { $0.map { $0 == old && entities[e].name == "Post" ? new : $0 } }
        }
        return try ManagedObjectModel(entities: entities)
    }

    /// Two posts of Ann's through Tributary; every kind of derived attribute is right.
    func expectDerivedValues(_ coordinator: PersistentStoreCoordinator, key: String, words: String) throws {
        let ann = try coordinator.fetch(FetchRequest(entityName: "Author"))[0].objectID
        try coordinator.execute(BatchInsertRequest(entityName: "Post", objects: [
            ["title": "Crème Brûlée", key: "p1", words: 10, "author": .objectID(ann)],
            ["title": "Two", key: "p2", words: 5, "author": .objectID(ann)],
        ]))
        let post = try coordinator.fetch(FetchRequest(entityName: "Post", sortDescriptors: [SortDescriptor(key)]))[0]
        #expect(post["authorName"] == .string("Ann"))
        #expect(post["titleKey"] == .string("crème brûlée"))
        #expect(post["searchTitle"] == .string("creme brulee"))
        #expect(post["updatedAt"]?.isNull == false)
        let author = try coordinator.fetch(FetchRequest(entityName: "Author"))[0]
        #expect(author["postCount"] == .integer(2))
        #expect(author["wordCount"] == .integer(15))
    }

    @Test func derivedAttributesStillWorkAfterRenamingAColumnTheyDoNotRead() throws {
        let (coordinator, store) = try migrateDerivedStore(to: try derivedModel(renaming: "externalID", to: "slug"))
        #expect(store.migrationChanges == ["renamed Post.externalID to Post.slug"])
        try expectDerivedValues(coordinator, key: "slug", words: "words")
    }

    @Test func derivedAttributesReadingARenamedColumnFollowIt() throws {
        let model = try derivedModel(renaming: "words", to: "wordTotal", derivations: [
            "Author.wordCount": .aggregate(.sum, relationship: "posts", attribute: "wordTotal"),
            "Tag.longestPost": .aggregate(.max, relationship: "posts", attribute: "wordTotal"),
        ])
        let (coordinator, store) = try migrateDerivedStore(to: model)
        #expect(store.migrationChanges == ["renamed Post.words to Post.wordTotal"], "the derivations name the same column: nothing to recompute")
        try expectDerivedValues(coordinator, key: "externalID", words: "wordTotal")
    }
}

/// The blog model with Tag renamed to Label and Post.content to Post.text.
enum BlogV2 {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("Post") {
                Attribute("title", .string, optional: false)
                Attribute("text", .string).renamed(from: "content")
                Attribute("externalID", .string, optional: false).unique()
                Attribute("createdAt", .date, optional: false)
                DerivedAttributeDescription("updatedAt", .date, derivation: "now()")
                Relationship("tags", to: "Label", inverse: "posts", toMany: true)
                Relationship("attachments", to: "Attachment", inverse: "post", toMany: true, deleteRule: .cascade)
                FetchIndex("createdAt")
            }
            Entity("Label") {
                Attribute("name", .string, optional: false).unique()
                Attribute("color", .string, default: "gray")
                DerivedAttributeDescription("postCount", .integer, derivation: "posts.@count")
                Relationship("posts", to: "Post", inverse: "tags", toMany: true)
            }.renamed(from: "Tag")
            Entity("Attachment") {
                Attribute("fileName", .string, optional: false)
                Attribute("mimeType", .string, default: "application/octet-stream")
                Relationship("post", to: "Post", inverse: "attachments")
                Relationship("imageData", to: "ImageData", inverse: "attachment", deleteRule: .cascade)
            }
            Entity("ImageData") {
                Attribute("bytes", .binary).excludedFromHistory()
                Attribute("width", .integer)
                Attribute("height", .integer)
                Relationship("attachment", to: "Attachment", inverse: "imageData")
            }
        }
    }
}
