import Foundation
import Testing
@testable import Tributary

@Suite struct BatchRequestTests {
    let coordinator: PersistentStoreCoordinator

    init() throws {
        coordinator = try Fixtures.blogCoordinator(.inMemory())
    }

    func post(_ i: Int, title: String? = nil) -> [String: AttributeValue] {
        ["externalID": .string("ext-\(i)"), "title": .string(title ?? "Post \(i)"), "createdAt": .date(Date(timeIntervalSince1970: Double(i)))]
    }

    func count(_ entity: String, _ format: String? = nil) throws -> Int {
        try coordinator.count(for: FetchRequest(entityName: entity, predicate: try format.map { try StorePredicate(format: $0) }))
    }

    @Test func insertAppliesDefaults() throws {
        let result = try coordinator.execute(BatchInsertRequest(entityName: "Tag", objects: [["name": "swift"], ["name": "sqlite", "color": "blue"]]))
        #expect(result.count == 2)
        let colors = try coordinator.fetch(FetchRequest(entityName: "Tag", sortDescriptors: [SortDescriptor("name")])).map { $0["color"] }
        #expect(colors == [.string("blue"), .string("gray")])
    }

    @Test func uniqueMatchUpdatesAndLeavesRelationshipsAlone() throws {
        var tagRequest = BatchInsertRequest(entityName: "Tag", objects: [["name": "a"], ["name": "b"]])
        tagRequest.resultType = .objectIDs
        let tags = try coordinator.execute(tagRequest).objectIDs
        var first = post(1)
        first["content"] = "original content"
        first["tags"] = .array([.objectID(tags[0])])
        var insert = BatchInsertRequest(entityName: "Post", objects: [first])
        insert.resultType = .objectIDs
        let id = try coordinator.execute(insert).objectIDs[0]

        var again = post(1, title: "Renamed")
        again["tags"] = .array([.objectID(tags[1])])
        var reinsert = BatchInsertRequest(entityName: "Post", objects: [again, post(2)])
        reinsert.resultType = .objectIDs
        let result = try coordinator.execute(reinsert)
        #expect(result.inserted == 1)
        #expect(result.updated == 1)
        #expect(result.objectIDs[0] == id)
        let rows = try coordinator.fetch(FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "externalID == 'ext-1'")))
        #expect(rows.count == 1)
        #expect(rows[0]["title"] == "Renamed")
        #expect(rows[0]["content"] == "original content")  // keys not given are kept
        // Relationships of the matched row are left alone.
        #expect(try count("Post", "ANY tags.name == 'a'") == 1)
        #expect(try count("Post", "ANY tags.name == 'b'") == 0)
    }

    @Test func aBadObjectRejectsTheWholeBatch() throws {
        var objects = (0..<10).map { post($0) }
        objects[7]["createdAt"] = "not a date"
        let error = try #require(throws: TributaryError.self) { try coordinator.execute(BatchInsertRequest(entityName: "Post", objects: objects)) }
        #expect(error.code == .typeMismatch)
        #expect(error.location == "Post object 8")
        #expect(try count("Post") == 0)
    }

    @Test func unknownKeyMissingValueAndUnknownEntityAreNamed() throws {
        var withTypo = post(1)
        withTypo["titel"] = "x"
        let unknown = try #require(throws: TributaryError.self) { try coordinator.execute(BatchInsertRequest(entityName: "Post", objects: [withTypo])) }
        #expect(unknown.code == .unknownProperty)
        #expect(unknown.message.contains("'titel'"))
        let missing = try #require(throws: TributaryError.self) { try coordinator.execute(BatchInsertRequest(entityName: "Post", objects: [["externalID": "x"]])) }
        #expect(missing.code == .missingValue)
        let entity = try #require(throws: TributaryError.self) { try coordinator.execute(BatchInsertRequest(entityName: "Nope", objects: [[:]])) }
        #expect(entity.code == .unknownEntity)
    }

    @Test func batchUpdateSetsValuesAndReportsIDs() throws {
        try coordinator.execute(BatchInsertRequest(entityName: "Post", objects: (0..<10).map { post($0) }))
        var update = BatchUpdateRequest(entityName: "Post", predicate: try StorePredicate(format: "createdAt >= %@", .date(Date(timeIntervalSince1970: 5))), propertiesToUpdate: ["content": "late"])
        update.resultType = .objectIDs
        let result = try coordinator.execute(update)
        #expect(result.count == 5)
        #expect(result.objectIDs.map(\.primaryKey).sorted() == [6, 7, 8, 9, 10])
        #expect(try count("Post", "content == 'late'") == 5)
    }

    @Test func batchUpdateThatBreaksUniquenessWritesNothing() throws {
        try coordinator.execute(BatchInsertRequest(entityName: "Post", objects: (0..<3).map { post($0) }))
        let error = try #require(throws: TributaryError.self) {
            try coordinator.execute(BatchUpdateRequest(entityName: "Post", propertiesToUpdate: ["externalID": "same", "title": "changed"]))
        }
        #expect(error.code == .uniqueConstraint)
        #expect(error.message.contains("externalID"))
        #expect(try count("Post", "title == 'changed'") == 0)
    }

    @Test func batchUpdateRejectsNilForRequiredAndWrongTypes() throws {
        try coordinator.execute(BatchInsertRequest(entityName: "Post", objects: [post(0)]))
        #expect(throws: TributaryError.self) { try coordinator.execute(BatchUpdateRequest(entityName: "Post", propertiesToUpdate: ["title": .null])) }
        let type = try #require(throws: TributaryError.self) { try coordinator.execute(BatchUpdateRequest(entityName: "Post", propertiesToUpdate: ["createdAt": true])) }
        #expect(type.code == .typeMismatch)
    }

    @Test func batchDeleteCascadesPostToAttachmentToImageData() throws {
        var insert = BatchInsertRequest(entityName: "Post", objects: [post(0), post(1)])
        insert.resultType = .objectIDs
        let posts = try coordinator.execute(insert).objectIDs
        var images = BatchInsertRequest(entityName: "ImageData", objects: [["width": 1], ["width": 2], ["width": 3]])
        images.resultType = .objectIDs
        let imageIDs = try coordinator.execute(images).objectIDs
        try coordinator.execute(BatchInsertRequest(entityName: "Attachment", objects: [
            ["fileName": "a", "post": .objectID(posts[0]), "imageData": .objectID(imageIDs[0])],
            ["fileName": "b", "post": .objectID(posts[0]), "imageData": .objectID(imageIDs[1])],
            ["fileName": "c", "post": .objectID(posts[1]), "imageData": .objectID(imageIDs[2])],
        ]))
        let result = try coordinator.execute(BatchDeleteRequest(entityName: "Post", predicate: try StorePredicate(format: "externalID == 'ext-0'")))
        #expect(result.count == 1)
        #expect(result.deleted == 5)
        #expect(try count("Post") == 1)
        #expect(try count("Attachment") == 1)
        #expect(try count("ImageData") == 1)
        #expect(try count("ImageData", "width == 3") == 1)
    }

    @Test func batchDeleteNullifiesToManyMembership() throws {
        let (_, _) = try Fixtures.seedBlog(coordinator, posts: 6)
        try coordinator.execute(BatchDeleteRequest(entityName: "Tag", predicate: try StorePredicate(format: "name == 'swift'")))
        #expect(try count("Post") == 6)
        #expect(try count("Post", "tags.@count == 0") == 2)
        let store = try coordinator.requireStore()
        let links = try store.database.read { try $0.scalar("SELECT count(*) FROM \"_Post_tags\"")?.integerValue }
        #expect(links == 4)
    }

    @Test func denyRuleFailsTheDeleteWithNothingWritten() throws {
        let model = try ManagedObjectModel {
            Entity("Author") {
                Attribute("name", .string)
                Relationship("books", to: "Book", inverse: "author", toMany: true, deleteRule: .deny)
            }
            Entity("Book") {
                Attribute("title", .string)
                Relationship("author", to: "Author", inverse: "books")
            }
        }
        let c = PersistentStoreCoordinator(managedObjectModel: model)
        try c.addPersistentStore(with: .inMemory())
        var authors = BatchInsertRequest(entityName: "Author", objects: [["name": "A"], ["name": "B"]])
        authors.resultType = .objectIDs
        let ids = try c.execute(authors).objectIDs
        try c.execute(BatchInsertRequest(entityName: "Book", objects: [["title": "T", "author": .objectID(ids[0])]]))
        let error = try #require(throws: TributaryError.self) { try c.execute(BatchDeleteRequest(entityName: "Author")) }
        #expect(error.code == .deleteDenied)
        #expect(try c.count(for: FetchRequest(entityName: "Author")) == 2)
        // Deleting the books first lets the authors go.
        try c.execute(BatchDeleteRequest(entityName: "Book"))
        #expect(try c.execute(BatchDeleteRequest(entityName: "Author")).count == 2)
    }

    @Test func columnarInsertUpsertsAndAppliesDefaults() throws {
        var request = BatchInsertRequest(entityName: "Tag", columns: ["name"], rows: [["swift"], ["sqlite"]])
        request.resultType = .objectIDs
        let first = try coordinator.execute(request)
        #expect(first.inserted == 2)
        var again = BatchInsertRequest(entityName: "Tag", columns: ["name", "color"], rows: [["swift", "orange"], ["linux", "blue"]])
        again.resultType = .objectIDs
        let second = try coordinator.execute(again)
        #expect(second.inserted == 1)
        #expect(second.updated == 1)
        #expect(second.objectIDs[0] == first.objectIDs[0])  // the matched row's ID
        let colors = try coordinator.fetch(FetchRequest(entityName: "Tag", sortDescriptors: [SortDescriptor("name")])).map { $0["color"] }
        #expect(colors == [.string("blue"), .string("gray"), .string("orange")])
    }

    @Test func columnarInsertRejectsBadShapes() throws {
        let unknown = try #require(throws: TributaryError.self) { try coordinator.execute(BatchInsertRequest(entityName: "Tag", columns: ["nam"], rows: [["x"]])) }
        #expect(unknown.code == .unknownProperty)
        let width = try #require(throws: TributaryError.self) { try coordinator.execute(BatchInsertRequest(entityName: "Tag", columns: ["name"], rows: [["x"], ["y", "z"]])) }
        #expect(width.location == "Tag object 2")
        let missing = try #require(throws: TributaryError.self) { try coordinator.execute(BatchInsertRequest(entityName: "Post", columns: ["title"], rows: [["x"]])) }
        #expect(missing.code == .missingValue)
        let type = try #require(throws: TributaryError.self) { try coordinator.execute(BatchInsertRequest(entityName: "Tag", columns: ["name"], rows: [[.integer(3)]])) }
        #expect(type.code == .typeMismatch)
        #expect(try count("Tag") == 0)
    }
}
