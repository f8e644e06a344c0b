import Foundation
import Testing
@testable import Tributary

/// Contexts: objects, faults, relationships, saving, rollback and refresh.
@Suite struct ContextTests {
    private func fileCoordinator(_ dir: TemporaryDirectory, _ name: String = "c.sqlite", history: Bool = false) throws -> PersistentStoreCoordinator {
        let description = PersistentStoreDescription(url: dir.file(name))
        description.persistentHistoryTracking = history
        return try Fixtures.blogCoordinator(description)
    }

    private func newPost(_ context: ManagedObjectContext, _ i: Int) throws -> ManagedObject {
        let post = try context.insertNewObject(forEntityName: "Post")
        post["title"] = .string("Post \(i)")
        post["externalID"] = .string("ext-\(i)")
        post["createdAt"] = .date(Date(timeIntervalSince1970: 1_700_000_000 + Double(i)))
        return post
    }

    @Test func insertSaveAndFetchBack() throws {
        let dir = TemporaryDirectory()
        let coordinator = try fileCoordinator(dir)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let post = try newPost(context, 1)
        #expect(post.objectID.isTemporaryID)
        #expect(post.isInserted && context.hasChanges)
        #expect(post["content"] == .null)
        let tag = try context.insertNewObject(forEntityName: "Tag")
        tag["name"] = "swift"
        #expect(tag["color"] == "gray")   // the model's default
        try post.add(tag, toRelationship: "tags")
        try context.save()
        #expect(!post.objectID.isTemporaryID && !post.isInserted && !context.hasChanges)
        #expect(context.registeredObject(for: post.objectID) === post)

        let rows = try coordinator.fetch(FetchRequest(entityName: "Post"))
        #expect(rows.count == 1 && rows[0]["title"] == "Post 1" && rows[0].objectID == post.objectID)
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let fetched = try other.fetch(FetchRequest(entityName: "Post"))
        #expect(fetched.count == 1)
        #expect(try fetched[0].objectIDs(forRelationshipNamed: "tags") == [tag.objectID])
        let fetchedTag = try other.existingObject(with: tag.objectID)
        #expect(try fetchedTag.objectIDs(forRelationshipNamed: "posts") == [post.objectID])
    }

    @Test func faultsLoadWhenTouched() throws {
        let coordinator = try Fixtures.blogCoordinator(.inMemory())
        let (_, posts) = try Fixtures.seedBlog(coordinator, posts: 3)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let post = try context.object(with: posts[1])
        #expect(post.isFault)
        #expect(try post.value(forKey: "title", as: String.self) == "Post 1")
        #expect(!post.isFault)
        #expect(try post.value(forKey: "content", as: String?.self) == nil)
        #expect(throws: TributaryError.self) { try post.value(forKey: "title", as: Int.self) }
        #expect(throws: TributaryError.self) { try post.value(forKey: "nope") }
        #expect(try context.object(with: posts[1]) === post)
    }

    @Test func changeTrackingAndCommittedValues() throws {
        let coordinator = try Fixtures.blogCoordinator(.inMemory())
        let (_, posts) = try Fixtures.seedBlog(coordinator, posts: 2)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let post = try context.existingObject(with: posts[0])
        #expect(!post.hasChanges && !post.isUpdated)
        post["title"] = "Changed"
        #expect(post.isUpdated && post.hasChanges && post.hasPersistentChangedValues)
        #expect(post.changedValues() == ["title": "Changed"])
        #expect(post.committedValues(forKeys: ["title"]) == ["title": "Post 0"])
        post["title"] = "Post 0"   // back to the stored value
        #expect(post.hasChanges && !post.hasPersistentChangedValues)
        context.rollback()
        #expect(!post.hasChanges && post["title"] == "Post 0")
    }

    @Test func requiredValuesAreValidatedAndAFailedSaveChangesNothing() throws {
        let dir = TemporaryDirectory()
        let coordinator = try fileCoordinator(dir)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let good = try newPost(context, 1)
        let bad = try context.insertNewObject(forEntityName: "Post")
        bad["externalID"] = "ext-2"
        let error = try #require(throws: TributaryError.self) { try context.save() }
        #expect(error.code == .missingValue)
        #expect(error.message.contains("'title' of Post"))
        #expect(try coordinator.count(for: FetchRequest(entityName: "Post")) == 0)
        #expect(good.isInserted && bad.isInserted && good.objectID.isTemporaryID)
        bad["title"] = "Now valid"
        bad["createdAt"] = .date(Date())
        try context.save()
        #expect(try coordinator.count(for: FetchRequest(entityName: "Post")) == 2)
    }

    @Test func inversesAreKeptOnBothSides() throws {
        let coordinator = try Fixtures.blogCoordinator(.inMemory())
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let first = try newPost(context, 1)
        let second = try newPost(context, 2)
        let attachment = try context.insertNewObject(forEntityName: "Attachment")
        attachment["fileName"] = "a.png"
        try first.add(attachment, toRelationship: "attachments")
        #expect(attachment["post"] == .objectID(first.objectID))
        // Moving the attachment to the second post takes it out of the first's to-many.
        try attachment.setValue(.objectID(second.objectID), forKey: "post")
        #expect(try first.objectIDs(forRelationshipNamed: "attachments").isEmpty)
        #expect(try second.objectIDs(forRelationshipNamed: "attachments") == [attachment.objectID])
        try context.save()
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let stored = try other.existingObject(with: second.objectID)
        #expect(try stored.objectIDs(forRelationshipNamed: "attachments") == [attachment.objectID])
        #expect(try other.existingObject(with: first.objectID).objectIDs(forRelationshipNamed: "attachments").isEmpty)
        // One-to-one: a new image data for the attachment replaces the old one's link.
        let image = try other.insertNewObject(forEntityName: "ImageData")
        let attachmentThere = try other.existingObject(with: attachment.objectID)
        try image.setValue(.objectID(attachmentThere.objectID), forKey: "attachment")
        #expect(attachmentThere["imageData"] == .objectID(image.objectID))
        try other.save()
        #expect(try ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator).existingObject(with: attachment.objectID)["imageData"] == .objectID(image.objectID))
    }

    @Test func manyToManyMembershipIsSavedFromEitherSide() throws {
        let coordinator = try Fixtures.blogCoordinator(.inMemory())
        let (tags, posts) = try Fixtures.seedBlog(coordinator, posts: 3)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let tag = try context.object(with: tags[2])
        // Post 0 has tag 0; give it tag 2 from the tag's side, and take tag 0 away from the post's side.
        try tag.add(try context.object(with: posts[0]), toRelationship: "posts")
        try context.object(with: posts[0]).remove(try context.object(with: tags[0]), fromRelationship: "tags")
        try context.save()
        let check = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        #expect(try check.object(with: posts[0]).objectIDs(forRelationshipNamed: "tags") == [tags[2]])
        #expect(try check.object(with: tags[2]).objectIDs(forRelationshipNamed: "posts") == [posts[0], posts[2]])
        #expect(try check.object(with: tags[0]).objectIDs(forRelationshipNamed: "posts").isEmpty)
    }

    @Test func cascadeThroughPostAttachmentAndImageData() async throws {
        let dir = TemporaryDirectory()
        let coordinator = try fileCoordinator(dir, history: true)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let post = try newPost(context, 1)
        let attachment = try context.insertNewObject(forEntityName: "Attachment")
        attachment["fileName"] = "photo.jpg"
        try attachment.setValue(.objectID(post.objectID), forKey: "post")
        let image = try context.insertNewObject(forEntityName: "ImageData")
        image["width"] = 640
        try image.setValue(.objectID(attachment.objectID), forKey: "attachment")
        try context.save()
        let ids = [post.objectID, attachment.objectID, image.objectID]

        let deleter = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let saved = deleter.didSaveNotifications()
        deleter.delete(try deleter.object(with: ids[0]))
        #expect(try deleter.object(with: ids[1]).isDeleted)
        #expect(try deleter.object(with: ids[2]).isDeleted)
        try deleter.save()
        for entity in ["Post", "Attachment", "ImageData"] {
            #expect(try coordinator.count(for: FetchRequest(entityName: entity)) == 0)
        }
        var iterator = saved.makeAsyncIterator()
        let next = await iterator.next()
        let notification = try #require(next)
        #expect(notification.deletedObjectIDs == Set(ids))
        let last = try #require(try coordinator.fetchHistory(.fetchHistory(after: nil)).last)
        #expect(Set(last.changes.filter { $0.changeType == .delete }.map(\.changedObjectID)) == Set(ids))
    }

    @Test func denyRuleFailsTheSaveWithNothingWritten() throws {
        let model = try ManagedObjectModel {
            Entity("Author") {
                Attribute("name", .string, optional: false)
                Relationship("books", to: "Book", inverse: "author", toMany: true, deleteRule: .deny)
            }
            Entity("Book") {
                Attribute("title", .string)
                Relationship("author", to: "Author", inverse: "books")
            }
        }
        let dir = TemporaryDirectory()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(with: PersistentStoreDescription(url: dir.file("d.sqlite")))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let author = try context.insertNewObject(forEntityName: "Author")
        author["name"] = "Ann"
        let book = try context.insertNewObject(forEntityName: "Book")
        book["title"] = "One"
        try book.setValue(.objectID(author.objectID), forKey: "author")
        try context.save()

        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let otherAuthor = try other.object(with: author.objectID)
        otherAuthor["name"] = "Ann B."
        other.delete(otherAuthor)
        let error = try #require(throws: TributaryError.self) { try other.save() }
        #expect(error.code == .deleteDenied)
        #expect(try coordinator.count(for: FetchRequest(entityName: "Author")) == 1)
        #expect(try coordinator.fetch(FetchRequest(entityName: "Author"))[0]["name"] == "Ann")
        #expect(otherAuthor.isDeleted && other.hasChanges)
        // Deleting the book first lets the author go, in one save.
        other.delete(try other.object(with: book.objectID))
        try other.save()
        #expect(try coordinator.count(for: FetchRequest(entityName: "Author")) == 0)
    }

    @Test func faultOfADeletedRowFollowsShouldDeleteInaccessibleFaults() throws {
        let coordinator = try Fixtures.blogCoordinator(.inMemory())
        let (_, posts) = try Fixtures.seedBlog(coordinator, posts: 2)
        try coordinator.execute(BatchDeleteRequest(entityName: "Post", predicate: try StorePredicate(format: "title == 'Post 0'")))

        let lenient = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        #expect(lenient.shouldDeleteInaccessibleFaults)
        let gone = try lenient.object(with: posts[0])
        #expect(try gone.value(forKey: "title") == .null)
        #expect(gone.isDeleted)
        #expect(!lenient.hasChanges)

        let strict = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        strict.shouldDeleteInaccessibleFaults = false
        let fault = try strict.object(with: posts[0])
        let error = try #require(throws: TributaryError.self) { try fault.value(forKey: "title") }
        #expect(error.code == .objectNotFound)
        #expect(error.message.contains("does not exist"))
        #expect(throws: TributaryError.self) { try strict.existingObject(with: posts[0]) }
        #expect(try strict.existingObject(with: posts[1])["title"] == "Post 1")
    }

    @Test func refreshKeepsOrDropsUnsavedChanges() throws {
        let coordinator = try Fixtures.blogCoordinator(.inMemory())
        let (_, posts) = try Fixtures.seedBlog(coordinator, posts: 1)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let post = try context.existingObject(with: posts[0])
        post["title"] = "Local"
        try coordinator.execute(BatchUpdateRequest(entityName: "Post", propertiesToUpdate: ["content": "from the store"]))
        context.refreshAllObjects()
        #expect(post["title"] == "Local" && post["content"] == "from the store")
        context.refresh(post, mergeChanges: false)
        #expect(post.isFault && !post.hasChanges && post["title"] == "Post 0")
        post["title"] = "Again"
        context.reset()
        #expect(post.managedObjectContext == nil)
        #expect(!context.hasChanges && context.registeredObjects.isEmpty)
    }

    @Test func derivedAttributesAreTheStoresAfterASave() throws {
        let coordinator = try Fixtures.blogCoordinator(.inMemory())
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let tag = try context.insertNewObject(forEntityName: "Tag")
        tag["name"] = "swift"
        let post = try newPost(context, 1)
        try post.add(tag, toRelationship: "tags")
        let error = try #require(throws: TributaryError.self) { try tag.setValue(5, forKey: "postCount") }
        #expect(error.code == .derivedAttribute)
        try context.save()
        #expect(tag["postCount"] == 1)
        #expect(post["updatedAt"].dateValue != nil)
        try post.remove(tag, fromRelationship: "tags")
        try context.save()
        #expect(tag["postCount"] == 0)
    }

    @Test func fetchPrefetchesRelationships() throws {
        let coordinator = try Fixtures.blogCoordinator(.inMemory())
        try Fixtures.seedBlog(coordinator, posts: 6)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        var request = FetchRequest(entityName: "Post", sortDescriptors: [SortDescriptor("title", ascending: false)])
        request.predicate = try StorePredicate(format: "ANY tags.name == 'swift'")
        request.relationshipKeyPathsForPrefetching = ["tags"]
        let posts = try context.fetch(request)
        #expect(posts.map { $0["title"] } == ["Post 3", "Post 0"])
        let tags = context.registeredObjects.filter { $0.entity.name == "Tag" }
        #expect(tags.count == 1 && tags.allSatisfy { !$0.isFault })
        request.relationshipKeyPathsForPrefetching = ["nope"]
        #expect(throws: TributaryError.self) { try context.fetch(request) }
    }
}

/// A typed subclass, as application code writes one.
final class Post: ManagedObject, EntityNamed, @unchecked Sendable {
    static let entityName = "Post"
    @Managed("title") var title: String
    @Managed("content") var content: String?
    @Managed("externalID") var externalID: String
    @Managed("createdAt") var createdAt: Date
    @Managed("tags") var tags: [ObjectID]
}

@Suite struct TypedObjectTests {
    @Test func subclassPropertiesReadAndWrite() throws {
        let coordinator = try Fixtures.blogCoordinator(.inMemory())
        let (tags, _) = try Fixtures.seedBlog(coordinator, posts: 0)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let post = try context.insert(Post.self)
        post.title = "Typed"
        post.externalID = "t-1"
        post.createdAt = Date(timeIntervalSince1970: 1_000)
        post.tags = [tags[0]]
        #expect(post.content == nil)
        try context.save()
        let other = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let fetched = try other.fetch(Post.self, predicate: try StorePredicate(format: "title == 'Typed'"))
        #expect(fetched.count == 1)
        #expect(fetched[0].title == "Typed" && fetched[0].createdAt == Date(timeIntervalSince1970: 1_000) && fetched[0].tags == [tags[0]])
    }
}
