import Foundation
import Testing
@testable import Tributary

extension NotificationTests {
    /// Saves of other coordinators and processes merged into a context that merges automatically.
    @Suite struct RemoteMergeTests {
        private func viewer(_ coordinator: PersistentStoreCoordinator, _ id: ObjectID) throws -> (ManagedObjectContext, ManagedObject) {
            let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
            try context.setQueryGenerationFrom(.current)
            context.automaticallyMergesChangesFromParent = true
            let post = try context.existingObject(with: id)
            return (context, post)
        }

        @Test func anotherCoordinatorOnANamedInMemoryStore() async throws {
            let url = PersistentStoreDescription.inMemory(named: "merge-\(UUID().uuidString)").url
            let mine = try Fixtures.blogCoordinator(notifyingDescription(url))
            let theirs = try Fixtures.blogCoordinator(notifyingDescription(url))
            let (_, posts) = try Fixtures.seedBlog(mine, posts: 2)
            let (context, post) = try viewer(mine, posts[0])
            let other = try context.existingObject(with: posts[1])
            let writer = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: theirs)
            try writer.object(with: posts[0])["title"] = "Theirs"
            writer.delete(try writer.object(with: posts[1]))
            try writer.save()
            #expect(await Wait.until { post["title"] == "Theirs" })
            #expect(await Wait.until { other.isDeleted })
        }

        @Test func anotherCoordinatorOnAFileStoreMovesThePinnedGeneration() async throws {
            let dir = TemporaryDirectory()
            let mine = try Fixtures.blogCoordinator(notifyingDescription(dir.file("m.sqlite")))
            let theirs = try Fixtures.blogCoordinator(notifyingDescription(dir.file("m.sqlite")))
            let (_, posts) = try Fixtures.seedBlog(mine, posts: 2)
            let (context, post) = try viewer(mine, posts[0])
            post["content"] = "unsaved here"
            let writer = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: theirs)
            try writer.object(with: posts[0])["title"] = "From the other coordinator"
            try writer.save()
            #expect(await Wait.until { post["title"] == "From the other coordinator" })
            #expect(post["content"] == "unsaved here")   // local edits kept
            #expect(try context.count(for: FetchRequest(entityName: "Post")) == 2)
        }

        @Test func anotherProcessOnAFileStore() async throws {
            let dir = TemporaryDirectory()
            let path = dir.file("p.sqlite").path
            let mine = try Fixtures.blogCoordinator(notifyingDescription(dir.file("p.sqlite")))
            let (_, posts) = try Fixtures.seedBlog(mine, posts: 2)
            let (context, post) = try viewer(mine, posts[1])
            defer { withExtendedLifetime(context) {} }   // objects do not keep their context alive
            let result = try await TributaryBinary.run(TributaryBinary.url, ["update", path, "--entity", "Post", "--where", "title == 'Post 1'", "--set", "title=From another process", "--author", "cli"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(await Wait.until { post["title"] == "From another process" })
        }
    }
}
