import Foundation
import Testing
@testable import Tributary

/// Two contexts edit the same post; the second to save meets the first's newer row.
@Suite struct MergePolicyTests {
    /// The post as the store holds it after: context A sets title and content and
    /// saves; context B (which read the post before A saved) sets title and
    /// externalID, then saves under `policy`.
    private func conflict(_ policy: MergePolicy) throws -> (stored: FetchedRow, b: ManagedObject, error: Error?, context: ManagedObjectContext) {
        let dir = TemporaryDirectory()
        let coordinator = try Fixtures.blogCoordinator(PersistentStoreDescription(url: dir.file("m.sqlite")))
        let (_, posts) = try Fixtures.seedBlog(coordinator, posts: 1)
        let a = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let b = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        b.mergePolicy = policy
        let postA = try a.existingObject(with: posts[0])
        let postB = try b.existingObject(with: posts[0])
        postA["title"] = "A title"
        postA["content"] = "A content"
        try a.save()
        postB["title"] = "B title"
        postB["externalID"] = "B-ext"
        var caught: Error?
        do { try b.save() } catch { caught = error }
        return (try coordinator.fetch(FetchRequest(entityName: "Post"))[0], postB, caught, b)   // objects do not keep their context alive
    }

    @Test func errorPolicyListsTheConflictAndWritesNothing() throws {
        let (stored, post, error, context) = try conflict(.error)
        defer { withExtendedLifetime(context) {} }
        let conflictError = try #require(error as? MergeConflictError)
        #expect(conflictError.code == .mergeConflict)
        #expect(conflictError.conflicts.count == 1)
        let conflict = conflictError.conflicts[0]
        #expect(conflict.kind == .version)
        #expect(conflict.objectValues["title"] == "B title")
        #expect(conflict.snapshotValues?["title"] == "Post 0")
        #expect(conflict.storeValues?["title"] == "A title")
        #expect(conflict.snapshotVersion == 1 && conflict.storeVersion == 2)
        #expect("\(conflictError)".contains("changed in the store"))
        #expect(stored["title"] == "A title" && stored["content"] == "A content" && stored["externalID"] == "ext-0")
        #expect(post.hasChanges)
    }

    @Test func storeTrumpKeepsTheStoresChangesAndWritesTheOthers() throws {
        let (stored, post, error, context) = try conflict(.mergeByPropertyStoreTrump)
        defer { withExtendedLifetime(context) {} }
        #expect(error == nil)
        #expect(stored["title"] == "A title" && stored["content"] == "A content" && stored["externalID"] == "B-ext")
        #expect(post["title"] == "A title" && post["externalID"] == "B-ext" && !post.hasChanges)
    }

    @Test func objectTrumpWritesTheContextsChangesOverTheStores() throws {
        let (stored, post, error, context) = try conflict(.mergeByPropertyObjectTrump)
        defer { withExtendedLifetime(context) {} }
        #expect(error == nil)
        #expect(stored["title"] == "B title" && stored["content"] == "A content" && stored["externalID"] == "B-ext")
        #expect(post["content"] == "A content")
    }

    @Test func overwriteWritesTheWholeObject() throws {
        let (stored, _, error, _) = try conflict(.overwrite)
        #expect(error == nil)
        #expect(stored["title"] == "B title" && stored["content"] == .null && stored["externalID"] == "B-ext")
    }

    @Test func rollbackTakesTheStoresRow() throws {
        let (stored, post, error, context) = try conflict(.rollback)
        defer { withExtendedLifetime(context) {} }
        #expect(error == nil)
        #expect(stored["title"] == "A title" && stored["content"] == "A content" && stored["externalID"] == "ext-0")
        #expect(post["title"] == "A title" && !post.hasChanges)
    }

    @Test func aResolvedSaveIsTheNewBaseForTheNextOne() throws {
        let dir = TemporaryDirectory()
        let coordinator = try Fixtures.blogCoordinator(PersistentStoreDescription(url: dir.file("n.sqlite")))
        let (_, posts) = try Fixtures.seedBlog(coordinator, posts: 1)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        context.mergePolicy = .mergeByPropertyObjectTrump
        let post = try context.existingObject(with: posts[0])
        try coordinator.execute(BatchUpdateRequest(entityName: "Post", propertiesToUpdate: ["content": "batch"]))
        post["title"] = "first"
        try context.save()
        context.mergePolicy = .error
        post["title"] = "second"
        try context.save()   // no conflict: the first save read the row's new version
        #expect(try coordinator.fetch(FetchRequest(entityName: "Post"))[0]["title"] == "second")
    }

    @Test func aRowDeletedInTheStore() throws {
        let coordinator = try Fixtures.blogCoordinator(.inMemory())
        let (_, posts) = try Fixtures.seedBlog(coordinator, posts: 2)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let post = try context.existingObject(with: posts[0])
        try coordinator.execute(BatchDeleteRequest(entityName: "Post", predicate: try StorePredicate(format: "title == 'Post 0'")))
        post["title"] = "edited"
        let error = try #require(throws: MergeConflictError.self) { try context.save() }
        #expect(error.conflicts[0].storeValues == nil)
        context.mergePolicy = .mergeByPropertyObjectTrump
        try context.save()
        #expect(post.isDeleted)
        #expect(try coordinator.count(for: FetchRequest(entityName: "Post")) == 1)
    }

    // MARK: Unique constraints

    /// A new tag named like an existing one, saved under `policy`.
    private func duplicateTag(_ policy: MergePolicy) throws -> (rows: [FetchedRow], tag: ManagedObject, existing: ObjectID, error: Error?, context: ManagedObjectContext) {
        let coordinator = try Fixtures.blogCoordinator(.inMemory())
        var request = BatchInsertRequest(entityName: "Tag", objects: [["name": "swift", "color": "orange"]])
        request.resultType = .objectIDs
        let existing = try coordinator.execute(request).objectIDs[0]
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        context.mergePolicy = policy
        let tag = try context.insertNewObject(forEntityName: "Tag")
        tag["name"] = "swift"
        tag["color"] = "red"
        var caught: Error?
        do { try context.save() } catch { caught = error }
        return (try coordinator.fetch(FetchRequest(entityName: "Tag")), tag, existing, caught, context)
    }

    @Test func uniqueConflictUnderErrorNamesBothObjects() throws {
        let (rows, tag, existing, error, context) = try duplicateTag(.error)
        defer { withExtendedLifetime(context) {} }
        let conflict = try #require((error as? MergeConflictError)?.conflicts.first)
        #expect(conflict.kind == .uniqueConstraint(attributes: ["name"]))
        #expect(conflict.existingObjectID == existing)
        #expect(conflict.storeValues?["color"] == "orange" && conflict.objectValues["color"] == "red")
        #expect(rows.count == 1 && tag.isInserted)
    }

    @Test func uniqueConflictUnderObjectTrumpMergesOntoTheRow() throws {
        let (rows, tag, existing, error, context) = try duplicateTag(.mergeByPropertyObjectTrump)
        defer { withExtendedLifetime(context) {} }
        #expect(error == nil)
        #expect(rows.count == 1 && rows[0]["color"] == "red")
        #expect(tag.objectID == existing && !tag.isInserted)
    }

    @Test func uniqueConflictUnderStoreTrumpTakesTheRow() throws {
        let (rows, tag, existing, error, context) = try duplicateTag(.mergeByPropertyStoreTrump)
        defer { withExtendedLifetime(context) {} }
        #expect(error == nil)
        #expect(rows.count == 1 && rows[0]["color"] == "orange")
        #expect(tag.objectID == existing && tag["color"] == "orange")
    }
}
