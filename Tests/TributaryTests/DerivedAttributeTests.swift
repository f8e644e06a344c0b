import Foundation
import Testing
@testable import Tributary

/// A small publishing model with every kind of derived attribute.
enum DerivedFixtures {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("Author") {
                Attribute("name", .string, optional: false).unique()
                DerivedAttributeDescription("postCount", .integer, derivation: "posts.@count")
                DerivedAttributeDescription("wordCount", .integer, derivation: "posts.@sum.words")
                Relationship("posts", to: "Post", inverse: "author", toMany: true, deleteRule: .cascade)
            }
            Entity("Post") {
                Attribute("title", .string, optional: false)
                Attribute("externalID", .string, optional: false).unique()
                Attribute("words", .integer, default: 0)
                DerivedAttributeDescription("authorName", .string, derivation: "author.name")
                DerivedAttributeDescription("titleKey", .string, derivation: "lowercase:(title)")
                DerivedAttributeDescription("searchTitle", .string, derivation: "canonical:(title)")
                DerivedAttributeDescription("updatedAt", .date, derivation: .now)
                Relationship("author", to: "Author", inverse: "posts")
                Relationship("tags", to: "Tag", inverse: "posts", toMany: true)
                FetchIndex("searchTitle")
            }
            Entity("Tag") {
                Attribute("name", .string, optional: false).unique()
                DerivedAttributeDescription("postCount", .integer, derivation: "posts.@count")
                DerivedAttributeDescription("longestPost", .integer, derivation: "posts.@max.words")
                DerivedAttributeDescription("firstTitle", .string, derivation: "posts.@min.title")
                Relationship("posts", to: "Post", inverse: "tags", toMany: true)
            }
        }
    }

    static let yaml = """
    entities:
      Author:
        attributes:
          name: { type: string, optional: false, unique: true }
          postCount: { type: integer, derived: posts.@count }
          wordCount: { type: integer, derived: "posts.@sum.words" }
        relationships:
          posts: { to: Post, inverse: author, toMany: true, deleteRule: cascade }
      Post:
        attributes:
          title: { type: string, optional: false }
          externalID: { type: string, optional: false, unique: true }
          words: { type: integer, default: 0 }
          authorName: { type: string, derived: author.name }
          titleKey: { type: string, derived: "lowercase(title)" }
          searchTitle: { type: string, derived: "canonical:(title)" }
          updatedAt: { type: date, derived: now() }
        relationships:
          author: { to: Author, inverse: posts }
          tags: { to: Tag, inverse: posts, toMany: true }
        indexes: [[searchTitle]]
      Tag:
        attributes:
          name: { type: string, optional: false, unique: true }
          postCount: { type: integer, derived: posts.@count }
          longestPost: { type: integer, derived: posts.@max.words }
          firstTitle: { type: string, derived: posts.@min.title }
        relationships:
          posts: { to: Post, inverse: tags, toMany: true }
    """
}

@Suite struct DerivedAttributeTests {
    let coordinator: PersistentStoreCoordinator

    init() throws {
        let description = PersistentStoreDescription.inMemory()
        description.persistentHistoryTracking = true
        coordinator = PersistentStoreCoordinator(managedObjectModel: try DerivedFixtures.model())
        try coordinator.addPersistentStore(with: description)
    }

    @discardableResult
    func insert(_ entity: String, _ objects: [[String: AttributeValue]]) throws -> [ObjectID] {
        var request = BatchInsertRequest(entityName: entity, objects: objects)
        request.resultType = .objectIDs
        return try coordinator.execute(request).objectIDs
    }

    func update(_ entity: String, _ format: String, _ values: [String: AttributeValue]) throws {
        try coordinator.execute(BatchUpdateRequest(entityName: entity, predicate: try StorePredicate(format: format), propertiesToUpdate: values))
    }

    func rows(_ entity: String, sortedBy key: String = "name") throws -> [FetchedRow] {
        var request = FetchRequest(entityName: entity)
        request.sortDescriptors = [SortDescriptor(key)]
        return try coordinator.fetch(request)
    }

    func value(_ entity: String, _ format: String, _ key: String) throws -> AttributeValue? {
        try coordinator.fetch(FetchRequest(entityName: entity, predicate: try StorePredicate(format: format))).first?[key]
    }

    /// Each tag's stored postCount next to the number of its posts counted by a query.
    func tagCounts() throws -> [String: (stored: Int64?, real: Int)] {
        var counts: [String: (Int64?, Int)] = [:]
        for tag in try rows("Tag") {
            guard case .string(let name) = tag["name"] else { continue }
            let real = try coordinator.count(for: FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "ANY tags.name == %@", .string(name))))
            counts[name] = (tag["postCount"]?.integerValue, real)
        }
        return counts
    }

    func expectCountsRight(_ expected: [String: Int], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let counts = try tagCounts()
        for (name, count) in expected {
            #expect(counts[name]?.stored == Int64(count), "stored postCount of \(name)", sourceLocation: sourceLocation)
            #expect(counts[name]?.real == count, "real count of \(name)", sourceLocation: sourceLocation)
        }
    }

    func post(_ i: Int, author: ObjectID? = nil, tags: [ObjectID] = [], words: Int = 10) -> [String: AttributeValue] {
        var values: [String: AttributeValue] = ["externalID": .string("p\(i)"), "title": .string("Post \(i)"), "words": .integer(Int64(words))]
        if let author { values["author"] = .objectID(author) }
        if !tags.isEmpty { values["tags"] = .array(tags.map { .objectID($0) }) }
        return values
    }

    // MARK: Aggregates

    @Test func postCountFollowsTaggingCascadesAndBatchDeletes() throws {
        let tags = try insert("Tag", [["name": "swift"], ["name": "sqlite"], ["name": "linux"]])
        try expectCountsRight(["swift": 0, "sqlite": 0, "linux": 0])
        let authors = try insert("Author", [["name": "ada"], ["name": "bob"]])
        try insert("Post", [
            post(1, author: authors[0], tags: [tags[0], tags[1]], words: 100),
            post(2, author: authors[0], tags: [tags[0]], words: 300),
            post(3, author: authors[1], tags: [tags[0], tags[2]], words: 50),
        ])
        try expectCountsRight(["swift": 3, "sqlite": 1, "linux": 1])
        #expect(try value("Tag", "name == 'swift'", "longestPost") == .integer(300))
        #expect(try value("Tag", "name == 'swift'", "firstTitle") == "Post 1")
        #expect(try value("Author", "name == 'ada'", "postCount") == .integer(2))
        #expect(try value("Author", "name == 'ada'", "wordCount") == .integer(400))

        // A batch update of the aggregated attribute.
        try update("Post", "externalID == 'p2'", ["words": 20])
        #expect(try value("Tag", "name == 'swift'", "longestPost") == .integer(100))
        #expect(try value("Author", "name == 'ada'", "wordCount") == .integer(120))

        // A batch delete: the deleter removes the join rows, the triggers recount.
        try coordinator.execute(BatchDeleteRequest(entityName: "Post", predicate: try StorePredicate(format: "externalID == 'p1'")))
        try expectCountsRight(["swift": 2, "sqlite": 0, "linux": 1])
        #expect(try value("Tag", "name == 'sqlite'", "longestPost") == .null)
        #expect(try value("Tag", "name == 'swift'", "firstTitle") == "Post 2")

        // A cascade: deleting bob deletes post 3 and untags it.
        try coordinator.execute(BatchDeleteRequest(entityName: "Author", predicate: try StorePredicate(format: "name == 'bob'")))
        try expectCountsRight(["swift": 1, "sqlite": 0, "linux": 0])
        #expect(try value("Author", "name == 'ada'", "postCount") == .integer(1))
    }

    @Test func blogModelKeepsTagPostCount() throws {
        let blog = try Fixtures.blogCoordinator(.inMemory())
        try Fixtures.seedBlog(blog, posts: 20)
        let names = ["swift", "sqlite", "linux"]
        func counts() throws -> [Int64?] {
            try names.map { try blog.fetch(FetchRequest(entityName: "Tag", predicate: try StorePredicate(format: "name == %@", .string($0)))).first?["postCount"]?.integerValue }
        }
        func real() throws -> [Int64?] {
            try names.map { Int64(try blog.count(for: FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "ANY tags.name == %@", .string($0))))) }
        }
        #expect(try counts() == [7, 7, 6])
        #expect(try counts() == real())
        try blog.execute(BatchDeleteRequest(entityName: "Post", predicate: try StorePredicate(format: "title BEGINSWITH 'Post 1'")))
        #expect(try counts() == real())
        #expect(try counts() == [4, 2, 3])   // posts 0, 2…9 are left
    }

    @Test func plainSQLWritesKeepDerivedValuesRight() throws {
        // Context saves and other processes write plain INSERT/UPDATE/DELETE through a
        // Tributary writer; the triggers maintain derived values there too.
        let tags = try insert("Tag", [["name": "swift"], ["name": "sqlite"]])
        let posts = try insert("Post", [post(1, tags: [tags[0]]), post(2)])
        let store = try coordinator.requireStore()
        let join = "_Post_tags"
        try store.database.write { db in
            try db.execute("INSERT INTO \"\(join)\" (src, dst) VALUES (?, ?)", [.integer(posts[1].primaryKey), .integer(tags[0].primaryKey)])
            try db.execute("INSERT INTO \"\(join)\" (src, dst) VALUES (?, ?)", [.integer(posts[1].primaryKey), .integer(tags[1].primaryKey)])
        }
        try expectCountsRight(["swift": 2, "sqlite": 1])
        // Untagging.
        try store.database.write { db in
            try db.execute("DELETE FROM \"\(join)\" WHERE src = ? AND dst = ?", [.integer(posts[0].primaryKey), .integer(tags[0].primaryKey)])
        }
        try expectCountsRight(["swift": 1, "sqlite": 1])
        // A plain insert of a post fills its copies and time.
        try store.database.write { db in
            try db.execute("INSERT INTO \"Post\" (title, externalID) VALUES ('Über Öl', 'p9')")
        }
        #expect(try value("Post", "externalID == 'p9'", "titleKey") == "über öl")
        #expect(try value("Post", "externalID == 'p9'", "updatedAt") != .null)
        // A writer setting derived values itself (a save writing every column, a shell) is overruled.
        try store.database.write { db in
            try db.execute("INSERT INTO \"Post\" (title, externalID, titleKey) VALUES ('ABC', 'p10', 'zzz')")
        }
        #expect(try value("Post", "externalID == 'p10'", "titleKey") == "abc")
        try store.database.write { db in
            try db.execute("UPDATE \"Tag\" SET postCount = 99, longestPost = -1 WHERE name = 'swift'")
            try db.execute("UPDATE \"Post\" SET titleKey = 'x', updatedAt = 0 WHERE externalID = 'p9'")
        }
        try expectCountsRight(["swift": 1, "sqlite": 1])
        #expect(try value("Tag", "name == 'swift'", "longestPost") == .integer(10))
        #expect(try value("Post", "externalID == 'p9'", "titleKey") == "über öl")
        #expect(try value("Post", "externalID == 'p9'", "updatedAt").map { $0 != .date(Date(timeIntervalSince1970: 0)) } == true)
    }

    // MARK: Copies and transforms

    @Test func copiesThroughToOneFollowTheSource() throws {
        let authors = try insert("Author", [["name": "ada"], ["name": "bob"]])
        try insert("Post", [post(1, author: authors[0]), post(2)])
        #expect(try value("Post", "externalID == 'p1'", "authorName") == "ada")
        #expect(try value("Post", "externalID == 'p2'", "authorName") == .null)

        try update("Author", "name == 'ada'", ["name": "Ada L."])
        #expect(try value("Post", "externalID == 'p1'", "authorName") == "Ada L.")

        try update("Post", "externalID == 'p2'", ["author": .objectID(authors[1])])
        #expect(try value("Post", "externalID == 'p2'", "authorName") == "bob")
        try update("Post", "externalID == 'p2'", ["author": .null])
        #expect(try value("Post", "externalID == 'p2'", "authorName") == .null)

        // An upsert setting the author through the foreign key.
        try insert("Post", [["externalID": "p1", "title": "Post 1", "author": .objectID(authors[1])]])
        #expect(try value("Post", "externalID == 'p1'", "authorName") == "bob")
    }

    @Test func transformsFoldFullUnicode() throws {
        try insert("Post", [["externalID": "p1", "title": "Crème BRÛLÉE à l'ÉCOLE"], ["externalID": "p2", "title": "STRASSE Ǆ"]])
        #expect(try value("Post", "externalID == 'p1'", "titleKey") == "crème brûlée à l'école")
        #expect(try value("Post", "externalID == 'p1'", "searchTitle") == "creme brulee a l'ecole")
        #expect(try value("Post", "externalID == 'p2'", "titleKey") == "strasse ǆ")
        try update("Post", "externalID == 'p2'", ["title": "ÀÉÎ"])
        #expect(try value("Post", "externalID == 'p2'", "titleKey") == "àéî")
        #expect(try value("Post", "externalID == 'p2'", "searchTitle") == "aei")
        // The derived column is queryable like any other.
        #expect(try coordinator.count(for: FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "searchTitle BEGINSWITH 'creme'"))) == 1)
    }

    @Test func selfReferencesAndOneToOneInverseSides() throws {
        // Person.manager/reports relate rows of one table; Person.badge is the side of a
        // one-to-one whose key lives in Badge.
        let model = try ManagedObjectModel {
            Entity("Person") {
                Attribute("name", .string)
                DerivedAttributeDescription("managerName", .string, derivation: "manager.name")
                DerivedAttributeDescription("reportCount", .integer, derivation: "reports.@count")
                DerivedAttributeDescription("badgeCode", .string, derivation: "badge.code")
                Relationship("manager", to: "Person", inverse: "reports")
                Relationship("reports", to: "Person", inverse: "manager", toMany: true)
                Relationship("badge", to: "Badge", inverse: "person")
            }
            Entity("Badge") {
                Attribute("code", .string)
                Relationship("person", to: "Person", inverse: "badge")
            }
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(with: .inMemory())
        var request = BatchInsertRequest(entityName: "Person", objects: [["name": "ada"]])
        request.resultType = .objectIDs
        let ada = try coordinator.execute(request).objectIDs[0]
        request.objects = [["name": "bob", "manager": .objectID(ada)], ["name": "cy", "manager": .objectID(ada)]]
        let reports = try coordinator.execute(request).objectIDs
        func person(_ name: String) throws -> FetchedRow? {
            try coordinator.fetch(FetchRequest(entityName: "Person", predicate: try StorePredicate(format: "name == %@", .string(name)))).first
        }
        #expect(try person("ada")?["reportCount"] == .integer(2))
        #expect(try person("bob")?["managerName"] == "ada")
        try coordinator.execute(BatchUpdateRequest(entityName: "Person", predicate: try StorePredicate(format: "name == 'ada'"), propertiesToUpdate: ["name": "Ada"]))
        #expect(try person("cy")?["managerName"] == "Ada")
        try coordinator.execute(BatchUpdateRequest(entityName: "Person", predicate: try StorePredicate(format: "name == 'cy'"), propertiesToUpdate: ["manager": .objectID(reports[0])]))
        #expect(try person("Ada")?["reportCount"] == .integer(1))
        #expect(try person("bob")?["reportCount"] == .integer(1))

        try coordinator.execute(BatchInsertRequest(entityName: "Badge", objects: [["code": "B-1", "person": .objectID(reports[0])]]))
        #expect(try person("bob")?["badgeCode"] == "B-1")
        try coordinator.execute(BatchUpdateRequest(entityName: "Badge", propertiesToUpdate: ["code": "B-2"]))
        #expect(try person("bob")?["badgeCode"] == "B-2")
        try coordinator.execute(BatchUpdateRequest(entityName: "Badge", propertiesToUpdate: ["person": .objectID(ada)]))
        #expect(try person("bob")?["badgeCode"] == .null)
        #expect(try person("Ada")?["badgeCode"] == "B-2")
        try coordinator.execute(BatchDeleteRequest(entityName: "Badge"))
        #expect(try person("Ada")?["badgeCode"] == .null)
    }

    // MARK: now()

    @Test func updatedAtIsSetOnInsertAndEveryUpdatePath() throws {
        let before = Date()
        try insert("Post", [post(1), post(2)])
        func updatedAt(_ id: String) throws -> Date {
            guard case .date(let date) = try value("Post", "externalID == '\(id)'", "updatedAt") else { throw TributaryError(.missingValue, "no updatedAt for \(id)") }
            return date
        }
        let inserted = try updatedAt("p1")
        let insertedP2 = try updatedAt("p2")
        #expect(inserted >= before.addingTimeInterval(-0.01) && inserted <= Date().addingTimeInterval(0.01))

        Thread.sleep(forTimeInterval: 0.01)
        try update("Post", "externalID == 'p1'", ["words": 5])
        let afterUpdate = try updatedAt("p1")
        #expect(afterUpdate > inserted)
        #expect(try updatedAt("p2") == insertedP2, "an untouched row keeps its time")

        Thread.sleep(forTimeInterval: 0.01)
        try insert("Post", [["externalID": "p2", "title": "Upserted"]])
        #expect(try updatedAt("p2") > insertedP2)

        // A derived value changing (a tag's count) is not an update of the post's stored values.
        let unchanged = try updatedAt("p1")
        try insert("Tag", [["name": "t", "posts": .array([])]])
        #expect(try updatedAt("p1") == unchanged)
    }

    @Test func upsertsIntoTablesWithDerivedTriggersReportWhatTheyDid() throws {
        // Post has now() and copies, so batch inserts insert, then update on a conflict.
        #expect(try coordinator.requireStore().schema.tablesWithUpdateTriggers.contains("Post"))
        let first = try insert("Post", [post(1, words: 5), post(2)])
        var request = BatchInsertRequest(entityName: "Post", objects: [["externalID": "p2", "title": "Two"], post(3), ["externalID": "p1", "title": "One", "words": 6]])
        request.resultType = .objectIDs
        let result = try coordinator.execute(request)
        #expect((result.inserted, result.updated, result.count) == (1, 2, 3))
        #expect(result.objectIDs[0] == first[1] && result.objectIDs[2] == first[0])
        #expect(try value("Post", "externalID == 'p1'", "titleKey") == "one")
        #expect(try value("Post", "externalID == 'p1'", "words") == .integer(6))
        #expect(try value("Post", "externalID == 'p2'", "words") == .integer(10), "values not given stay")
        #expect(try coordinator.count(for: FetchRequest(entityName: "Post")) == 3)
    }

    // MARK: Read-only

    @Test func writersCannotSetDerivedAttributes() throws {
        #expect { try insert("Tag", [["name": "swift", "postCount": 3]]) } throws: { error in
            (error as? TributaryError)?.code == .derivedAttribute && "\(error)".contains("'postCount' of Tag is derived (posts.@count) and read-only")
        }
        #expect { try coordinator.execute(BatchInsertRequest(entityName: "Tag", columns: ["name", "postCount"], rows: [["a", 1]])) } throws: { error in
            (error as? TributaryError)?.code == .derivedAttribute
        }
        #expect { try update("Post", "title != nil", ["updatedAt": .date(Date())]) } throws: { error in
            (error as? TributaryError)?.code == .derivedAttribute && "\(error)".contains("leave updatedAt out")
        }
        #expect(try coordinator.count(for: FetchRequest(entityName: "Tag")) == 0)
    }

    @Test func ndjsonImportsSkipDerivedKeys() throws {
        let decoder = try NDJSONDecoder(entity: "Tag", store: try coordinator.requireStore())
        let values = try decoder.decode(line: #"{"name": "swift", "postCount": 7, "firstTitle": "x"}"#, place: "tags.ndjson:1")
        #expect(values == ["name": "swift"])
    }

    // MARK: History

    @Test func derivedValuesAppearInHistory() throws {
        let tags = try insert("Tag", [["name": "swift"]])
        let tagInsert = try #require(try coordinator.fetchHistory(.fetchHistory(after: nil)).last)
        #expect(tagInsert.changes.count == 1)
        #expect(tagInsert.changes[0].changeType == .insert)
        #expect(tagInsert.changes[0].insertedValues["postCount"] == .integer(0))

        try insert("Post", [post(1, tags: tags, words: 40)])
        let transaction = try #require(try coordinator.fetchHistory(.fetchHistory(after: tagInsert.token)).last)
        let postInsert = try #require(transaction.changes.first { $0.entityName == "Post" })
        #expect(postInsert.insertedValues["titleKey"] == "post 1")
        #expect(postInsert.insertedValues["updatedAt"].map { $0 != .null } == true)
        let tagChange = try #require(transaction.changes.first { $0.entityName == "Tag" })
        #expect(tagChange.changeType == .update)
        #expect(tagChange.updatedProperties.first { $0.name == "postCount" } == PropertyChange(name: "postCount", before: .integer(0), after: .integer(1)))
        #expect(tagChange.updatedProperties.first { $0.name == "longestPost" } == PropertyChange(name: "longestPost", before: .null, after: .integer(40)))

        Thread.sleep(forTimeInterval: 0.005)   // now() has SQLite's millisecond resolution
        try update("Post", "externalID == 'p1'", ["title": "Renamed"])
        let rename = try #require(try coordinator.fetchHistory(.fetchHistory(after: transaction.token)).last)
        let names = Set(try #require(rename.changes.first { $0.entityName == "Post" }).updatedProperties.map(\.name))
        #expect(names == ["title", "titleKey", "searchTitle", "updatedAt"])
        let tagRename = try #require(rename.changes.first { $0.entityName == "Tag" })
        #expect(tagRename.updatedProperties == [PropertyChange(name: "firstTitle", before: "Post 1", after: "Renamed")])
    }

    // MARK: Models

    @Test func yamlAndDSLGiveEqualModels() throws {
        let dsl = try DerivedFixtures.model()
        let yaml = try ManagedObjectModel(yaml: DerivedFixtures.yaml)
        #expect(yaml == dsl)
        #expect(try ManagedObjectModel(yaml: dsl.yamlText) == dsl)
        #expect(try ManagedObjectModel.fromJSON(dsl.canonicalJSON()) == dsl)
        #expect(dsl.entity(named: "Post")?.attribute(named: "titleKey")?.derivation == .transform(.lowercase, path: ["title"]))
        #expect(dsl.entity(named: "Tag")?.attribute(named: "longestPost")?.derivation == .aggregate(.max, relationship: "posts", attribute: "words"))
    }

    func modelError(_ attributes: String, relationships: String = "", other: String = "") -> String {
        let yaml = """
        entities:
          Post:
            attributes:
              title: string
              words: integer
        \(attributes)
            relationships:
              tags: { to: Tag, inverse: posts, toMany: true }
              author: { to: Author, inverse: posts }
        \(relationships)
          Tag:
            attributes:
              name: string
        \(other)
            relationships:
              posts: { to: Post, inverse: tags, toMany: true }
          Author:
            relationships:
              posts: { to: Post, inverse: author, toMany: true }
        """
        do {
            _ = try ManagedObjectModel(yaml: yaml, source: "m.yml")
            return "no error"
        } catch {
            return "\(error)"
        }
    }

    @Test func badDerivationsGivePreciseErrors() throws {
        #expect(modelError("      x: { type: string, derived: subtitle }")
            == "m.yml: Post.x: derived attribute: Post has no attribute 'subtitle'; Post has title, words, x")
        #expect(modelError("      x: { type: integer, derived: author.@count }")
            == "m.yml: Post.x: derived attribute: @count needs a to-many relationship, and Post.author is to-one; copy the value with author.attribute instead")
        #expect(modelError("", other: "      x: { type: integer, derived: posts.@sum.title }")
            == "m.yml: Tag.x: derived attribute: @sum of Post.title, a string: only integers and doubles add up; use @count, @min or @max")
        #expect(modelError("      a: { type: string, derived: b }\n      b: { type: string, derived: lowercase:(a) }")
            == "m.yml: Post.a: derived attributes depend on each other in a cycle: Post.a → Post.b → Post.a; derive one of them from stored attributes only")
        #expect(modelError("      n: { type: integer, derived: tags.@sum.m }", other: "      m: { type: integer, derived: posts.@max.n }")
            .contains("cycle: Post.n → Tag.m → Post.n"))
        #expect(modelError("      x: { type: string, derived: tags.name }")
            .contains("Post.tags is to-many, so 'tags.name' has many values; use an aggregate"))
        #expect(modelError("      x: { type: integer, derived: posts.@avg }").contains("unknown aggregate '@avg'"))
        #expect(modelError("      x: { type: string, derived: upper(title) }").contains("unknown function 'upper'"))
        #expect(modelError("      x: { type: integer, derived: title }")
            .contains("title is a string, and the attribute is a integer; declare it type: string"))
        #expect(modelError("      x: { type: string, derived: now() }").contains("now() gives a date"))
        #expect(modelError("      x: { type: string, derived: title, default: a }").contains("a derived attribute cannot have a default"))
        // The DSL reports a malformed expression when the model is built.
        #expect { try ManagedObjectModel { Entity("A") { Attribute("a", .string); DerivedAttributeDescription("b", .string, derivation: "lowercase((a") } } } throws: { error in
            "\(error)".contains("derivation 'lowercase((a'")
        }
    }

    // MARK: Migration

    @Test func migrationAddsAndBackfillsDerivedAttributes() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let plain = try ManagedObjectModel {
            Entity("Post") {
                Attribute("title", .string)
                Relationship("tags", to: "Tag", inverse: "posts", toMany: true)
            }
            Entity("Tag") {
                Attribute("name", .string)
                Relationship("posts", to: "Post", inverse: "tags", toMany: true)
            }
        }
        do {
            let first = PersistentStoreCoordinator(managedObjectModel: plain)
            try first.addPersistentStore(with: PersistentStoreDescription(url: url))
            var tags = BatchInsertRequest(entityName: "Tag", objects: [["name": "a"], ["name": "b"]])
            tags.resultType = .objectIDs
            let ids = try first.execute(tags).objectIDs
            try first.execute(BatchInsertRequest(entityName: "Post", objects: [
                ["title": "ONE", "tags": .array([.objectID(ids[0])])],
                ["title": "Two", "tags": .array([.objectID(ids[0]), .objectID(ids[1])])],
            ]))
        }
        var derived = plain.entities
        derived[0].attributes.append(AttributeDescription(name: "key", type: .string, derivation: .transform(.lowercase, path: ["title"])))
        derived[0].attributes.append(AttributeDescription(name: "touchedAt", type: .date, derivation: .now))
        derived[1].attributes.append(AttributeDescription(name: "postCount", type: .integer, isOptional: false, derivation: .aggregate(.count, relationship: "posts", attribute: nil)))
        let second = PersistentStoreCoordinator(managedObjectModel: try ManagedObjectModel(entities: derived))
        try second.addPersistentStore(with: PersistentStoreDescription(url: url))
        var request = FetchRequest(entityName: "Tag")
        request.sortDescriptors = [SortDescriptor("name")]
        #expect(try second.fetch(request).map { $0["postCount"] } == [.integer(2), .integer(1)])
        request = FetchRequest(entityName: "Post")
        request.sortDescriptors = [SortDescriptor("title")]
        #expect(try second.fetch(request).map { $0["key"] } == ["one", "two"])
        #expect(try second.fetch(request).allSatisfy { if case .date = $0["touchedAt"] { true } else { false } })
        // The triggers work from then on.
        try second.execute(BatchInsertRequest(entityName: "Post", objects: [["title": "Three", "tags": .array([.objectID(try second.fetchObjectIDs(FetchRequest(entityName: "Tag", predicate: try StorePredicate(format: "name == 'b'")))[0])])]]))
        request = FetchRequest(entityName: "Tag", predicate: try StorePredicate(format: "name == 'b'"))
        #expect(try second.fetch(request).first?["postCount"] == .integer(2))
        // A column added by migration has no time default (SQLite allows none); the insert trigger sets it.
        let three = try second.fetch(FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "title == 'Three'")))
        #expect(three.first?["key"] == "three")
        #expect(three.first.map { if case .date = $0["touchedAt"] { true } else { false } } == true)
    }
}
