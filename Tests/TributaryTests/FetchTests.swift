import Foundation
import Testing
@testable import Tributary

@Suite struct FetchTests {
    let coordinator: PersistentStoreCoordinator
    let tags: [ObjectID]
    let posts: [ObjectID]

    init() throws {
        coordinator = try Fixtures.blogCoordinator(.inMemory())
        (tags, posts) = try Fixtures.seedBlog(coordinator, posts: 30)
        // Post 0 also gets content; attachments for posts 0 and 1.
        try coordinator.execute(BatchUpdateRequest(entityName: "Post", predicate: try StorePredicate(format: "externalID == 'ext-0'"), propertiesToUpdate: ["content": "Hello, World"]))
        var images = BatchInsertRequest(entityName: "ImageData", objects: [["width": 800, "height": 600], ["width": 100, "height": 100]])
        images.resultType = .objectIDs
        let imageIDs = try coordinator.execute(images).objectIDs
        try coordinator.execute(BatchInsertRequest(entityName: "Attachment", objects: [
            ["fileName": "a.png", "post": .objectID(posts[0]), "imageData": .objectID(imageIDs[0])],
            ["fileName": "b.png", "post": .objectID(posts[1]), "imageData": .objectID(imageIDs[1])],
        ]))
    }

    func titles(_ format: String, _ arguments: AttributeValue...) throws -> [String] {
        let request = FetchRequest(entityName: "Post", predicate: try StorePredicate(format: format, argumentArray: arguments), sortDescriptors: [SortDescriptor("createdAt")])
        return try coordinator.fetch(request).compactMap { $0["title"]?.stringValue }
    }

    func count(_ format: String, _ arguments: AttributeValue...) throws -> Int {
        try coordinator.count(for: FetchRequest(entityName: "Post", predicate: try StorePredicate(format: format, argumentArray: arguments)))
    }

    func count(in entity: String, _ format: String, _ arguments: AttributeValue...) throws -> Int {
        try coordinator.count(for: FetchRequest(entityName: entity, predicate: try StorePredicate(format: format, argumentArray: arguments)))
    }

    @Test func comparisonOperators() throws {
        #expect(try titles("title == %@", "Post 3") == ["Post 3"])
        #expect(try count("title != 'Post 3'") == 29)
        #expect(try count("createdAt > %@", .date(Date(timeIntervalSince1970: 1_700_000_025))) == 4)
        #expect(try count("createdAt >= '2023-11-14T22:13:45Z'") == 5)  // 1_700_000_025
        #expect(try count("createdAt < %@", .date(Date(timeIntervalSince1970: 1_700_000_002))) == 2)
        #expect(try count("createdAt BETWEEN %@", .array([.date(Date(timeIntervalSince1970: 1_700_000_010)), .date(Date(timeIntervalSince1970: 1_700_000_012))])) == 3)
        #expect(try count("externalID IN {'ext-1', 'ext-2', 'nope'}") == 2)
        #expect(try count("externalID IN %@", .array(["ext-5"])) == 1)
        #expect(try count("content == nil") == 29)
        #expect(try count("content != nil") == 1)
    }

    @Test func stringOperatorsAndOptions() throws {
        #expect(try count("title BEGINSWITH 'Post 1'") == 11)
        #expect(try count("title BEGINSWITH 'post 1'") == 0)
        #expect(try count("title BEGINSWITH[c] 'post 1'") == 11)
        #expect(try count("title ENDSWITH '9'") == 3)
        #expect(try count("content CONTAINS 'World'") == 1)
        #expect(try count("content CONTAINS[c] 'world'") == 1)
        #expect(try count("content CONTAINS 'world'") == 0)
        #expect(try count("title LIKE 'Post ?'") == 10)
        #expect(try count("title LIKE[c] 'POST 2*'") == 11)
        #expect(try count("title LIKE 'POST 2*'") == 0)
    }

    @Test func compoundPredicates() throws {
        #expect(try count("title BEGINSWITH 'Post 1' AND NOT (title == 'Post 1')") == 10)
        #expect(try count("title == 'Post 1' OR title == 'Post 2' AND externalID == 'ext-2'") == 2)
        #expect(try count("(title == 'Post 1' OR title == 'Post 2') AND externalID == 'ext-2'") == 1)
        #expect(try count("TRUEPREDICATE") == 30)
    }

    @Test func keyPathsAcrossRelationships() throws {
        #expect(try count("ANY tags.name == 'swift'") == 10)
        #expect(try count("ANY tags.name IN {'swift', 'linux'}") == 20)
        #expect(try count("NONE tags.name == 'swift'") == 20)
        #expect(try count("ALL tags.name == 'swift'") == 10 + 0)  // posts without tags would match too; every post has one
        #expect(try count("tags.@count == 1") == 30)
        #expect(try count(in: "Attachment", "post.title == 'Post 1'") == 1)
        #expect(try count(in: "Attachment", "imageData.width > 500 AND post.externalID == 'ext-0'") == 1)
        #expect(try count(in: "ImageData", "attachment.post.title == 'Post 0'") == 1)
        #expect(try count(in: "Attachment", "post == %@", .objectID(posts[1])) == 1)
        #expect(try count(in: "Tag", "ANY posts.title == 'Post 4'") == 1)
        #expect(try count(in: "Post", "ANY tags == %@", .objectID(tags[0])) == 10)
    }

    @Test func sortingLimitAndOffset() throws {
        var request = FetchRequest(entityName: "Post", sortDescriptors: [SortDescriptor("createdAt", ascending: false)])
        request.fetchLimit = 3
        request.fetchOffset = 1
        #expect(try coordinator.fetch(request).compactMap { $0["title"]?.stringValue } == ["Post 28", "Post 27", "Post 26"])
        #expect(try coordinator.count(for: request) == 3)
        let byPostTitle = FetchRequest(entityName: "Attachment", sortDescriptors: [SortDescriptor("post.title", ascending: false)])
        #expect(try coordinator.fetch(byPostTitle).compactMap { $0["fileName"]?.stringValue } == ["b.png", "a.png"])
    }

    @Test func resultTypes() throws {
        let ids = try coordinator.fetchObjectIDs(FetchRequest(entityName: "Post", sortDescriptors: [SortDescriptor("createdAt")]))
        #expect(ids == posts)
        let rows = try coordinator.fetch(FetchRequest(entityName: "Attachment", sortDescriptors: [SortDescriptor("fileName")]))
        #expect(rows[0].keys == ["fileName", "mimeType", "post", "imageData"])
        #expect(rows[0]["post"] == .objectID(posts[0]))
        #expect(rows[0]["mimeType"] == "application/octet-stream")
        let images = try coordinator.fetch(FetchRequest(entityName: "ImageData", predicate: try StorePredicate(format: "width == 800")))
        #expect(images[0]["attachment"] == .objectID(ObjectID(storeID: posts[0].storeID, entityName: "Attachment", primaryKey: 1)))
        var some = FetchRequest(entityName: "Post")
        some.propertiesToFetch = ["title"]
        #expect(try coordinator.fetch(some)[0].dictionary == ["title": "Post 0"])
    }

    @Test func enumerationStreamsInBatches() throws {
        var request = FetchRequest(entityName: "Post")
        request.fetchBatchSize = 7
        var sizes: [Int] = []
        try coordinator.enumerate(request) { sizes.append($0.count) }
        #expect(sizes == [7, 7, 7, 7, 2])
    }

    @Test func predicateErrorsNameTheKey() throws {
        let unknown = try #require(throws: TributaryError.self) { try count("titel == 'x'") }
        #expect(unknown.code == .invalidPredicate)
        #expect(unknown.message.contains("unknown key 'titel'"))
        let toMany = try #require(throws: TributaryError.self) { try count("tags.name == 'x'") }
        #expect(toMany.hint?.contains("ANY") == true)
        let type = try #require(throws: TributaryError.self) { try count("createdAt > 'yesterday'") }
        #expect(type.code == .typeMismatch)
        let op = try #require(throws: TributaryError.self) { try count(in: "Tag", "posts.@count BEGINSWITH 'x'") }
        #expect(op.code == .invalidPredicate)
    }

    @Test func valuesAreBoundNeverInterpolated() throws {
        let hostile = "x'); DROP TABLE \"Post\"; --"
        #expect(try count("title == %@", .string(hostile)) == 0)
        #expect(try count("title == 'a\\' OR 1=1 --'") == 0)
        #expect(try count("TRUEPREDICATE") == 30)
        let query = try FetchQuery(FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "title == %@", .string(hostile))), schema: coordinator.requireStore().schema)
        #expect(!query.sql.contains("DROP"))
        #expect(query.arguments == [.string(hostile)])
    }

    @Test func unknownEntityIsNamed() throws {
        let error = try #require(throws: TributaryError.self) { try coordinator.fetch(FetchRequest(entityName: "Pots")) }
        #expect(error.code == .unknownEntity)
        #expect(error.hint?.contains("Post") == true)
    }

    @Test func rowCursorReadsValuesInPlace() throws {
        var request = FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "title BEGINSWITH 'Post 2'"), sortDescriptors: [SortDescriptor("createdAt")])
        request.propertiesToFetch = ["title", "createdAt"]
        var titles: [String] = []
        var kept: [FetchedRow] = []
        try coordinator.enumerateRows(request) { row in
            #expect(row.keys == ["title", "createdAt"])
            titles.append(row["title"]?.stringValue ?? "?")
            #expect(row["content"] == nil)
            if row.primaryKey == posts[20].primaryKey { kept.append(row.copy()) }
        }
        #expect(titles == ["Post 2"] + (20..<30).map { "Post \($0)" })
        #expect(kept.count == 1)
        #expect(kept[0].objectID == posts[20])
        #expect(kept[0]["createdAt"] == .date(Date(timeIntervalSince1970: 1_700_000_020)))
    }
}
