import Foundation
import Testing
@testable import Tributary

@Suite struct NestedContextTests {
    @Test func childSaveReachesTheParentNotTheStore() throws {
        let coordinator = try Fixtures.blogCoordinator(.inMemory())
        let (tags, posts) = try Fixtures.seedBlog(coordinator, posts: 2)
        let parent = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let child = ManagedObjectContext(concurrencyType: .privateQueue, parent: parent)
        let edited = try child.object(with: posts[0])
        edited["title"] = "From the child"
        let tag = try child.insertNewObject(forEntityName: "Tag")
        tag["name"] = "child-tag"
        try edited.add(tag, toRelationship: "tags")
        child.delete(try child.object(with: posts[1]))
        try child.save()

        #expect(!child.hasChanges && parent.hasChanges)
        #expect(try parent.object(with: posts[0])["title"] == "From the child")
        #expect(try parent.object(with: posts[1]).isDeleted)
        let parentTag = try #require(parent.registeredObject(for: tag.objectID))
        #expect(parentTag.isInserted && parentTag["name"] == "child-tag")
        #expect(Set(try parent.object(with: posts[0]).objectIDs(forRelationshipNamed: "tags")) == [tags[0], tag.objectID])
        // The store has none of it yet.
        #expect(try coordinator.fetch(FetchRequest(entityName: "Post", sortDescriptors: [SortDescriptor("title")])).map { $0["title"] } == ["Post 0", "Post 1"])
        #expect(try coordinator.count(for: FetchRequest(entityName: "Tag")) == 3)

        try parent.save()
        #expect(try coordinator.fetch(FetchRequest(entityName: "Post")).map { $0["title"] } == ["From the child"])
        #expect(try coordinator.count(for: FetchRequest(entityName: "Tag")) == 4)
        #expect(!parentTag.objectID.isTemporaryID)
        // The child learns the permanent ID (delivered on its queue).
        child.queue.sync {}
        #expect(tag.objectID == parentTag.objectID)
    }

    @Test func childrenSeeTheParentsUnsavedChanges() throws {
        let coordinator = try Fixtures.blogCoordinator(.inMemory())
        let (_, posts) = try Fixtures.seedBlog(coordinator, posts: 1)
        let parent = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try parent.object(with: posts[0])["title"] = "Unsaved in parent"
        let draft = try parent.insertNewObject(forEntityName: "Tag")
        draft["name"] = "draft"
        let child = ManagedObjectContext(concurrencyType: .privateQueue, parent: parent)
        #expect(try child.object(with: posts[0])["title"] == "Unsaved in parent")
        #expect(try child.object(with: draft.objectID)["name"] == "draft")
        #expect(child.queryGenerationToken == parent.queryGenerationToken)
        #expect(throws: TributaryError.self) { try child.setQueryGenerationFrom(.current) }
    }

    @Test func siblingsMergeAutomatically() async throws {
        let coordinator = try Fixtures.blogCoordinator(.inMemory())
        let (_, posts) = try Fixtures.seedBlog(coordinator, posts: 1)
        let viewer = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        viewer.automaticallyMergesChangesFromParent = true
        let notMerging = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let seen = try viewer.existingObject(with: posts[0])
        let stale = try notMerging.existingObject(with: posts[0])
        let writer = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try writer.object(with: posts[0])["title"] = "Written"
        try writer.save()
        try await viewer.perform {}   // the merge was queued before this
        #expect(seen["title"] == "Written")
        #expect(stale["title"] == "Post 0")
        notMerging.mergeChanges(fromContextDidSave: ContextDidSave(updatedObjectIDs: [posts[0]]))
        #expect(stale["title"] == "Written")
    }
}

@Suite struct QueryGenerationTests {
    @Test func aPinnedContextSeesADeletedObjectUntilItAdvances() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("g.sqlite")
        let coordinator = try Fixtures.blogCoordinator(PersistentStoreDescription(url: url))
        let (_, posts) = try Fixtures.seedBlog(coordinator, posts: 3)
        let pinned = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try pinned.setQueryGenerationFrom(.current)
        #expect(pinned.queryGenerationToken == .current)
        #expect(try pinned.count(for: FetchRequest(entityName: "Post")) == 3)   // pins here
        #expect(pinned.queryGenerationToken != .current)
        #expect(coordinator.pinnedQueryGenerationCount == 1)

        // Another coordinator (another writer of the same file) deletes post 0 and saves.
        let other = try Fixtures.blogCoordinator(PersistentStoreDescription(url: url))
        let otherContext = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: other)
        otherContext.delete(try otherContext.object(with: posts[0]))
        try otherContext.save()
        #expect(try other.count(for: FetchRequest(entityName: "Post")) == 2)

        // The pinned context still sees it: counts, fetches, and a fault fired only now.
        #expect(try pinned.count(for: FetchRequest(entityName: "Post")) == 3)
        #expect(try pinned.fetch(FetchRequest(entityName: "Post")).count == 3)
        let fault = try pinned.object(with: posts[0])
        pinned.refresh(fault, mergeChanges: false)
        #expect(try fault.value(forKey: "title") == "Post 0" && !fault.isDeleted)
        // A second context pinned to the same token sees the same snapshot.
        let sharing = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try sharing.setQueryGenerationFrom(pinned.queryGenerationToken)
        #expect(try sharing.count(for: FetchRequest(entityName: "Post")) == 3)
        #expect(coordinator.pinnedQueryGenerationCount == 1)
        #expect((coordinator.oldestQueryGenerationAge ?? -1) >= 0)

        // Moving to the current generation shows the deletion.
        try pinned.setQueryGenerationFrom(.current)
        #expect(try pinned.count(for: FetchRequest(entityName: "Post")) == 2)
        pinned.refresh(fault, mergeChanges: false)
        #expect(fault["title"] == .null && fault.isDeleted)
        try sharing.setQueryGenerationFrom(nil)
        #expect(try sharing.count(for: FetchRequest(entityName: "Post")) == 2)
        #expect(coordinator.pinnedQueryGenerationCount == 1)   // only `pinned`'s new one
    }

    @Test func mergingMovesAPinnedContextToTheNewGeneration() throws {
        let dir = TemporaryDirectory()
        let coordinator = try Fixtures.blogCoordinator(PersistentStoreDescription(url: dir.file("m.sqlite")))
        let (_, posts) = try Fixtures.seedBlog(coordinator, posts: 2)
        let pinned = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try pinned.setQueryGenerationFrom(.current)
        let post = try pinned.existingObject(with: posts[1])
        try coordinator.execute(BatchUpdateRequest(entityName: "Post", propertiesToUpdate: ["title": "Updated"]))
        pinned.refresh(post, mergeChanges: false)
        #expect(post["title"] == "Post 1")
        pinned.mergeChanges(fromContextDidSave: ContextDidSave(updatedObjectIDs: [posts[1]]))
        #expect(post["title"] == "Updated")
    }

    @Test func runningOutOfReadersGivesATimeoutNotAHang() throws {
        let dir = TemporaryDirectory()
        let description = PersistentStoreDescription(url: dir.file("t.sqlite"))
        description.connectionPoolMaxSize = 1
        description.busyTimeout = 0.2
        let coordinator = try Fixtures.blogCoordinator(description)
        let pinned = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try pinned.setQueryGenerationFrom(.current)
        _ = try pinned.count(for: FetchRequest(entityName: "Post"))
        let error = try #require(throws: TributaryError.self) { try coordinator.count(for: FetchRequest(entityName: "Post")) }
        #expect(error.code == .readerTimeout)
        try pinned.setQueryGenerationFrom(nil)
        #expect(try coordinator.count(for: FetchRequest(entityName: "Post")) == 0)
    }
}
