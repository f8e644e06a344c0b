import Foundation
import Synchronization
import Testing
@testable import Tributary

/// The per-object delegate style of a fetched results controller, from a main-actor type.
@Suite struct FetchedResultsObjectStyleTests {
    /// A main-actor delegate (Swift 6) in Core Data's per-object style: it records what it hears.
    @MainActor final class Table: @preconcurrency FetchedResultsControllerDelegate {
        var events: [String] = []
        func controllerWillChangeContent(_ controller: FetchedResultsController) { events.append("will") }
        func controller(_ controller: FetchedResultsController, didChange anObject: ManagedObject, at indexPath: IndexPath?,
                        for type: FetchedResultsChangeType, newIndexPath: IndexPath?) {
            func path(_ p: IndexPath?) -> String { p.map { "\($0[0]).\($0[1])" } ?? "-" }
            events.append("\(type) \(anObject.objectID.primaryKey) \(path(indexPath))>\(path(newIndexPath))")
        }
        func controllerDidChangeContent(_ controller: FetchedResultsController) { events.append("did") }
    }

    @Test func perObjectCallbacksOnTheMainActor() async throws {
        let coordinator = try Fixtures.blogCoordinator(.inMemory())
        let (_, posts) = try Fixtures.seedBlog(coordinator, posts: 4)   // Post 0 … Post 3
        let view = ManagedObjectContext(concurrencyType: .mainQueue, coordinator: coordinator)
        view.automaticallyMergesChangesFromParent = true
        let controller = try FetchedResultsController(fetchRequest: FetchRequest(entityName: "Post", sortDescriptors: [SortDescriptor("title")]), managedObjectContext: view)
        let table = Table()
        controller.delegate = table
        try controller.performFetch()
        let background = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try await background.perform {
            try background.object(with: posts[0])["title"] = "Post 9"              // moves to the end
            try background.object(with: posts[1])["content"] = "edited"            // updated in place
            background.delete(try background.object(with: posts[3]))              // deleted
            try background.save()
        }
        var events: [String] = []
        for _ in 0..<500 where events.last != "did" {
            try await Task.sleep(for: .milliseconds(10))
            events = await MainActor.run { table.events }
        }
        let (k0, k1, k3) = (posts[0].primaryKey, posts[1].primaryKey, posts[3].primaryKey)
        #expect(events.first == "will" && events.last == "did", "\(events)")
        #expect(Set(events.dropFirst().dropLast()) == ["move \(k0) 0.0>0.2", "update \(k1) 0.1>0.0", "delete \(k3) 0.3>-"])
        withExtendedLifetime((view, controller, table)) {}
    }
}

extension FetchedResultsObjectStyleTests {
    @Test func aFetchLimitKeepsTheFirstResults() async throws {
        let coordinator = try Fixtures.blogCoordinator(.inMemory())
        let (_, posts) = try Fixtures.seedBlog(coordinator, posts: 5)   // Post 0 … Post 4
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        var request = FetchRequest(entityName: "Post", sortDescriptors: [SortDescriptor("title")])
        request.fetchLimit = 2
        let controller = try FetchedResultsController(fetchRequest: request, managedObjectContext: context)
        try controller.performFetch()
        #expect(controller.fetchedObjectIDs == [posts[0], posts[1]])
        let stream = controller.changes()
        let before = controller.fetchedObjectIDs
        let inserted = try context.performAndWait {
            let post = try context.insertNewObject(forEntityName: "Post")
            post["title"] = "Post 0a"
            post["externalID"] = "new"
            post["createdAt"] = .date(Date())
            try context.object(with: posts[3])["title"] = "Post 00"   // enters the first two
            try context.save()
            return post.objectID
        }
        var iterator = stream.makeAsyncIterator()
        let change = try #require(await iterator.next())
        #expect(controller.fetchedObjectIDs == [posts[0], posts[3]])
        #expect(before.applying(change.difference) == controller.fetchedObjectIDs)
        #expect(!controller.fetchedObjectIDs.contains(inserted))
    }
}
