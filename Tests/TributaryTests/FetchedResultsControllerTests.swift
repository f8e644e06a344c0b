import Foundation
import Testing
@testable import Tributary

@Suite struct FetchedResultsControllerTests {
    /// Five posts "Post 0"…"Post 4", a context, and a controller over posts by title.
    private func setUp(predicate: StorePredicate? = nil, section: String? = nil, sort: String = "title")
        throws -> (PersistentStoreCoordinator, ManagedObjectContext, FetchedResultsController, [ObjectID], [ObjectID]) {
        let coordinator = try Fixtures.blogCoordinator(.inMemory())
        let (tags, posts) = try Fixtures.seedBlog(coordinator, posts: 5)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let request = FetchRequest(entityName: "Post", predicate: predicate, sortDescriptors: [SortDescriptor(sort)])
        let controller = try FetchedResultsController(fetchRequest: request, managedObjectContext: context, sectionNameKeyPath: section)
        try controller.performFetch()
        return (coordinator, context, controller, tags, posts)
    }

    private func changes(_ change: FetchedResultsChange) -> (removed: [Int: ObjectID], inserted: [Int: ObjectID], moves: Int) {
        var removed: [Int: ObjectID] = [:], inserted: [Int: ObjectID] = [:], moves = 0
        for step in change.difference {
            switch step {
            case .remove(let offset, let id, let other): removed[offset] = id; if other != nil { moves += 1 }
            case .insert(let offset, let id, _): inserted[offset] = id
            }
        }
        return (removed, inserted, moves)
    }

    /// A `changes()` stream whose task is cancelled while a merge reports to the controller (both
    /// under the context's lock): ending the stream took the context's lock inside the stream's,
    /// and the report took them the other way round, so `tributary demo` hung under load.
    @Test func aStreamEndedWhileAReportHoldsTheContextsLockDoesNotDeadlock() async throws {
        let (coordinator, context, controller, _, posts) = try setUp()
        let stream = controller.changes()
        let consumer = Task.detached { for await _ in stream {} }
        try await Task.sleep(for: .milliseconds(100))   // the consumer waits in the stream
        var delete = BatchDeleteRequest(entityName: "Post")
        delete.objectIDs = [posts[0]]
        _ = try coordinator.execute(delete)
        let finished = DispatchSemaphore(value: 0)
        let thread = Thread {
            context.withLock {
                // Another thread ends the stream (its termination handler runs in the stream's
                // lock) while this one, in the context's lock, reports a change to the stream.
                Thread { consumer.cancel() }.start()
                Thread.sleep(forTimeInterval: 0.3)
                controller.contextDidChange(ContextDidSave(deletedObjectIDs: [posts[0]]))
            }
            finished.signal()
        }
        thread.start()
        let done = finished.wait(timeout: .now() + 10) == .success
        #expect(done, "ending the stream and reporting a change deadlocked")
        if done { #expect(controller.fetchedObjectIDs == Array(posts.dropFirst())) }
    }

    @Test func aSaveReportsInsertionsDeletionsAndMoves() async throws {
        let (_, context, controller, _, posts) = try setUp()
        #expect(controller.fetchedObjectIDs == posts)
        let stream = controller.changes()
        let before = controller.fetchedObjectIDs

        try context.performAndWait {
            let post = try context.insertNewObject(forEntityName: "Post")
            post["title"] = "Post 2a"
            post["externalID"] = "new"
            post["createdAt"] = .date(Date())
            context.delete(try context.object(with: posts[0]))
            try context.object(with: posts[4])["title"] = "Post 1a"
            try context.object(with: posts[2])["content"] = "edited in place"
            try context.save()
        }
        var iterator = stream.makeAsyncIterator()
        let next = await iterator.next()
        let change = try #require(next)
        let after = controller.fetchedObjectIDs
        let inserted = try #require(after.first { !posts.contains($0) })
        #expect(after == [posts[1], posts[4], posts[2], inserted, posts[3]])
        #expect(before.applying(change.difference) == after)
        let (removed, insertedAt, moves) = changes(change)
        #expect(removed == [0: posts[0], 4: posts[4]])
        #expect(insertedAt == [1: posts[4], 3: inserted])
        #expect(moves == 1)
        #expect(change.updatedObjectIDs == [posts[2]])
        #expect(controller.indexPath(forObject: try context.object(with: posts[4])) == IndexPath(indexes: [0, 1]))
    }

    @Test func changesOutsideThePredicateReportNothing() throws {
        let (_, context, controller, _, posts) = try setUp(predicate: try StorePredicate(format: "title IN {'Post 1', 'Post 2'}"))
        final class Recorder: FetchedResultsControllerDelegate, @unchecked Sendable {
            var changes: [FetchedResultsChange] = []
            func controller(_ controller: FetchedResultsController, didChange change: FetchedResultsChange) { changes.append(change) }
        }
        let recorder = Recorder()
        controller.delegate = recorder
        try context.object(with: posts[4])["content"] = "outside"
        try context.save()
        #expect(recorder.changes.isEmpty)
        try context.object(with: posts[3])["title"] = "Post 2"   // now inside
        try context.save()
        #expect(recorder.changes.count == 1)
        #expect(controller.fetchedObjectIDs == [posts[1], posts[2], posts[3]])
    }

    @Test func aBatchRequestThenAMerge() async throws {
        let (coordinator, context, controller, _, posts) = try setUp()
        var request = BatchDeleteRequest(entityName: "Post", predicate: try StorePredicate(format: "title == 'Post 3'"))
        request.resultType = .objectIDs
        let deleted = try coordinator.execute(request).objectIDs
        var update = BatchUpdateRequest(entityName: "Post", predicate: try StorePredicate(format: "title == 'Post 0'"), propertiesToUpdate: ["title": "Post 9"])
        update.resultType = .objectIDs
        let updated = try coordinator.execute(update).objectIDs
        #expect(controller.fetchedObjectIDs == posts)   // nothing merged yet
        let stream = controller.changes()
        context.mergeChanges(fromContextDidSave: ContextDidSave(updatedObjectIDs: Set(updated), deletedObjectIDs: Set(deleted)))
        #expect(controller.fetchedObjectIDs == [posts[1], posts[2], posts[4], posts[0]])
        var iterator = stream.makeAsyncIterator()
        let next = await iterator.next()
        let change = try #require(next)
        let (removed, inserted, moves) = changes(change)
        #expect(removed == [0: posts[0], 3: posts[3]])   // Post 0 moves to the end; Post 3 is gone
        #expect(inserted == [3: posts[0]])
        #expect(moves == 1)
        #expect(posts.applying(change.difference) == controller.fetchedObjectIDs)
    }

    @Test func sectionsByTheFirstTagReportSectionChanges() async throws {
        let (_, context, controller, tags, posts) = try setUp(section: "tags.@min.name", sort: "tags.@min.name")
        // Tags: swift (posts 0, 3), sqlite (1, 4), linux (2): sections linux, sqlite, swift.
        #expect(controller.sections.map(\.name) == ["linux", "sqlite", "swift"])
        #expect(controller.sections.map(\.numberOfObjects) == [1, 2, 2])
        let stream = controller.changes()
        // Post 2 leaves "linux" (the section goes) for "sqlite"; a new tag "apple" on post 0 makes a section.
        try context.performAndWait {
            let post2 = try context.object(with: posts[2])
            try post2.remove(try context.object(with: tags[2]), fromRelationship: "tags")
            try post2.add(try context.object(with: tags[1]), toRelationship: "tags")
            let apple = try context.insertNewObject(forEntityName: "Tag")
            apple["name"] = "apple"
            try context.object(with: posts[0]).add(apple, toRelationship: "tags")
            try context.save()
        }
        var iterator = stream.makeAsyncIterator()
        let next = await iterator.next()
        let change = try #require(next)
        #expect(change.sections.map(\.name) == ["apple", "sqlite", "swift"])
        #expect(change.sections.map(\.objectIDs) == [[posts[0]], [posts[1], posts[2], posts[4]], [posts[3]]])
        var insertedSections: [String] = [], removedSections: [String] = []
        for step in change.sectionDifference {
            switch step {
            case .insert(_, let value, _): insertedSections.append(value.description)
            case .remove(_, let value, _): removedSections.append(value.description)
            }
        }
        #expect(insertedSections == ["apple"] && removedSections == ["linux"])
    }

    @Test func badRequestsAreRefused() throws {
        let coordinator = try Fixtures.blogCoordinator(.inMemory())
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        #expect(throws: TributaryError.self) { try FetchedResultsController(fetchRequest: FetchRequest(entityName: "Post"), managedObjectContext: context) }
        let error = try #require(throws: TributaryError.self) {
            try FetchedResultsController(fetchRequest: FetchRequest(entityName: "Post", sortDescriptors: [SortDescriptor("nope")]), managedObjectContext: context)
        }
        #expect(error.message.contains("cannot sort by 'nope'"))
    }
}

extension NotificationTests {
    @Suite struct FetchedResultsRemoteTests {
        @Test func anotherProcessesImportMergedThroughTheWatcher() async throws {
            let dir = TemporaryDirectory()
            let url = dir.file("frc.sqlite")
            let coordinator = try Fixtures.blogCoordinator(notifyingDescription(url))
            let (_, posts) = try Fixtures.seedBlog(coordinator, posts: 2)
            let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
            context.automaticallyMergesChangesFromParent = true
            let controller = try FetchedResultsController(fetchRequest: FetchRequest(entityName: "Post", sortDescriptors: [SortDescriptor("title")]), managedObjectContext: context)
            try controller.performFetch()
            let feed = dir.file("posts.ndjson")
            try Data(#"{"externalID": "x-1", "title": "Post 0a", "createdAt": "2024-01-01T00:00:00Z"}"#.utf8 + [10]).write(to: feed)
            let result = try await TributaryBinary.run(TributaryBinary.url, ["import", url.path, "--entity", "Post", feed.path, "--author", "importer"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(await Wait.until { controller.fetchedObjectIDs.count == 3 })
            let ids = controller.fetchedObjectIDs
            #expect(ids.first == posts[0] && ids.last == posts[1])
        }
    }
}
