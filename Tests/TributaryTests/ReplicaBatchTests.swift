import Foundation
import Testing
@testable import Tributary

/// The batch-request options replicas use (primary keys, object IDs, link edits) and
/// consistent snapshots.
@Suite struct ReplicaBatchTests {
    let coordinator: PersistentStoreCoordinator

    init() throws {
        let description = PersistentStoreDescription.inMemory()
        description.persistentHistoryTracking = true
        coordinator = try Fixtures.blogCoordinator(description)
    }

    func id(_ entity: String, _ key: Int64) -> ObjectID { coordinator.persistentStores[0].objectID(entity: entity, primaryKey: key) }

    @Test func insertWithPrimaryKeysKeepsThemAndUpdatesInPlace() throws {
        var request = BatchInsertRequest(entityName: "Tag", objects: [["name": "swift"], ["name": "linux"]])
        request.primaryKeys = [40, 7]
        request.resultType = .objectIDs
        #expect(try coordinator.execute(request).objectIDs == [id("Tag", 40), id("Tag", 7)])
        request.objects = [["name": "swift", "color": "orange"], ["name": "linux"]]
        let again = try coordinator.execute(request)
        #expect(again.inserted == 0 && again.updated == 2)
        let rows = try coordinator.fetch(FetchRequest(entityName: "Tag"))
        #expect(rows.map(\.objectID.primaryKey) == [7, 40])
        #expect(rows.last?["color"] == .string("orange"))
        request.primaryKeys = [1]
        #expect(throws: TributaryError.self) { try coordinator.execute(request) }
    }

    @Test func updateAndDeleteByObjectIDWithLinks() throws {
        var tags = BatchInsertRequest(entityName: "Tag", objects: [["name": "a"], ["name": "b"], ["name": "c"]])
        tags.resultType = .objectIDs
        let tagIDs = try coordinator.execute(tags).objectIDs
        var posts = BatchInsertRequest(entityName: "Post", objects: (0..<3).map { ["externalID": .string("e\($0)"), "title": "T", "createdAt": .date(Date(timeIntervalSince1970: 0))] })
        posts.resultType = .objectIDs
        let postIDs = try coordinator.execute(posts).objectIDs
        var update = BatchUpdateRequest(entityName: "Post", propertiesToUpdate: ["title": "Only one"])
        update.objectIDs = [postIDs[1]]
        update.addedLinks = ["tags": [tagIDs[0], tagIDs[2]]]
        #expect(try coordinator.execute(update).updated == 1)
        #expect(try coordinator.count(for: FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "title == 'Only one'"))) == 1)
        #expect(try coordinator.count(for: FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "ANY tags.name == 'c'"))) == 1)
        // Links only: adding twice and removing what is not there change nothing more.
        var links = BatchUpdateRequest(entityName: "Post")
        links.objectIDs = [postIDs[1]]
        links.addedLinks = ["tags": [tagIDs[0]]]
        links.removedLinks = ["tags": [tagIDs[2], tagIDs[1]]]
        try coordinator.execute(links)
        #expect(try coordinator.count(for: FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "ANY tags.name == 'c'"))) == 0)
        #expect(try coordinator.count(for: FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "ANY tags.name == 'a'"))) == 1)
        var bad = BatchUpdateRequest(entityName: "Post")
        bad.addedLinks = ["title": [tagIDs[0]]]
        #expect(throws: TributaryError.self) { try coordinator.execute(bad) }
        var delete = BatchDeleteRequest(entityName: "Post")
        delete.objectIDs = [postIDs[0], postIDs[2], id("Post", 999)]
        #expect(try coordinator.execute(delete).count == 2)
        #expect(try coordinator.fetchObjectIDs(FetchRequest(entityName: "Post")) == [postIDs[1]])
        var wrong = BatchDeleteRequest(entityName: "Post")
        wrong.objectIDs = [tagIDs[0]]
        #expect(throws: TributaryError.self) { try coordinator.execute(wrong) }
    }

    @Test func snapshotReadsRowsLinksAndTheTokenTogether() throws {
        let (tags, posts) = try Fixtures.seedBlog(coordinator, posts: 4)
        var token: PersistentHistoryToken?
        var objects: [SnapshotObject] = []
        try coordinator.enumerateSnapshot(begin: { token = $0 }) { objects.append($0) }
        #expect(token == (try coordinator.currentPersistentHistoryToken()))
        #expect(objects.filter { $0.objectID.entityName == "Post" }.map(\.objectID) == posts)
        #expect(objects.filter { $0.objectID.entityName == "Tag" }.map(\.objectID) == tags)
        let first = try #require(objects.first { $0.objectID == posts[0] })
        #expect(first.properties.first { $0.name == "title" }?.after == .string("Post 0"))
        #expect(first.properties.first { $0.name == "tags" }?.added == [tags[0]])
        // Each many-to-many link once: on the side that owns the join table.
        #expect(objects.flatMap(\.properties).filter(\.isMembershipChange).count == 4)
        var onlyTags = 0
        try coordinator.enumerateSnapshot(entities: ["Tag"], begin: { _ in }) { _ in onlyTags += 1 }
        #expect(onlyTags == tags.count)
    }
}
