import Foundation
import Testing
@testable import Tributary

/// A context save is one history transaction, under the context's author and name, with values.
@Suite struct ContextHistoryTests {
    @Test func aSaveRecordsOneTransactionWithValues() throws {
        let dir = TemporaryDirectory()
        let description = PersistentStoreDescription(url: dir.file("h.sqlite"))
        description.persistentHistoryTracking = true
        let coordinator = try Fixtures.blogCoordinator(description)
        let (tags, posts) = try Fixtures.seedBlog(coordinator, posts: 2)
        let before = try coordinator.currentPersistentHistoryToken()

        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        context.name = "editor"
        context.transactionAuthor = "alice"
        let post = try context.object(with: posts[0])
        post["title"] = "Edited"
        try post.add(try context.object(with: tags[2]), toRelationship: "tags")
        let newTag = try context.insertNewObject(forEntityName: "Tag")
        newTag["name"] = "new"
        context.delete(try context.object(with: posts[1]))
        try context.save()

        let transactions = try coordinator.fetchHistory(.fetchHistory(after: before))
        #expect(transactions.count == 1)
        let transaction = try #require(transactions.first)
        #expect(transaction.author == "alice" && transaction.contextName == "editor")
        let byObject = Dictionary(grouping: transaction.changes, by: \.changedObjectID)
        let postChange = try #require(byObject[posts[0]]?.first)
        #expect(postChange.changeType == .update)
        let title = try #require(postChange.updatedProperties.first { $0.name == "title" })
        #expect(title.before == "Post 0" && title.after == "Edited")
        let membership = try #require(postChange.updatedProperties.first { $0.name == "tags" })
        #expect(membership.added == [tags[2]])
        let inserted = try #require(byObject[newTag.objectID]?.first)
        #expect(inserted.changeType == .insert && inserted.insertedValues["name"] == "new")
        let deleted = try #require(byObject[posts[1]]?.first)
        #expect(deleted.changeType == .delete && deleted.tombstone["title"] == "Post 1")
    }

    @Test func mergingHistoryFromAnotherCoordinator() throws {
        let dir = TemporaryDirectory()
        let description = PersistentStoreDescription(url: dir.file("r.sqlite"))
        description.persistentHistoryTracking = true
        let mine = try Fixtures.blogCoordinator(description)
        let theirs = try Fixtures.blogCoordinator(description)
        let (_, posts) = try Fixtures.seedBlog(mine, posts: 2)
        let token = try mine.currentPersistentHistoryToken()
        let view = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: mine)
        let post0 = try view.existingObject(with: posts[0])
        let post1 = try view.existingObject(with: posts[1])

        let writer = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: theirs)
        writer.transactionAuthor = "importer"
        try writer.object(with: posts[0])["title"] = "Imported"
        writer.delete(try writer.object(with: posts[1]))
        try writer.save()

        var request = PersistentHistoryChangeRequest.fetchHistory(after: token)
        request.filter.authors = ["importer"]
        ManagedObjectContext.mergeChanges(fromRemoteContextSave: ContextDidSave(transactions: try mine.fetchHistory(request)), into: [view])
        #expect(post0["title"] == "Imported")
        #expect(post1.isDeleted && view.registeredObject(for: posts[1]) == nil)
        #expect(try view.fetch(FetchRequest(entityName: "Post")).count == 1)
    }
}
