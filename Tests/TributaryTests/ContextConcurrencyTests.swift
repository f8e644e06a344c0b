import Foundation
import Testing
@testable import Tributary

/// Many tasks using contexts at once (run under the thread sanitizer by `make test`).
@Suite struct ContextConcurrencyTests {
    @Test func manyTasksShareContextsAndObjects() async throws {
        let dir = TemporaryDirectory()
        let container = PersistentContainer(name: "Blog", managedObjectModel: try Fixtures.blogModel())
        let description = PersistentStoreDescription(url: dir.file("t.sqlite"))
        description.persistentHistoryTracking = true
        container.persistentStoreDescriptions = [description]
        try await container.loadPersistentStores()
        let (tags, posts) = try Fixtures.seedBlog(container.persistentStoreCoordinator, posts: 20)
        let shared = container.newBackgroundContext()
        shared.automaticallyMergesChangesFromParent = true
        shared.mergePolicy = .mergeByPropertyObjectTrump

        try await withThrowingTaskGroup(of: Void.self) { group in
            // Writers: each task its own background context, saving new posts.
            for worker in 0..<6 {
                group.addTask {
                    try await container.performBackgroundTask { context in
                        context.transactionAuthor = "worker-\(worker)"
                        for i in 0..<20 {
                            let post = try context.insertNewObject(forEntityName: "Post")
                            post["title"] = .string("w\(worker)-\(i)")
                            post["externalID"] = .string("w\(worker)-\(i)")
                            post["createdAt"] = .date(Date())
                            try post.add(try context.object(with: tags[i % tags.count]), toRelationship: "tags")
                            if i % 5 == 4 { try context.save() }
                        }
                    }
                }
            }
            // Readers and editors on one shared context, from many tasks at once.
            for reader in 0..<6 {
                group.addTask {
                    for i in 0..<20 {
                        let post = try shared.object(with: posts[(reader + i) % posts.count])
                        _ = post["title"]
                        _ = try post.objectIDs(forRelationshipNamed: "tags")
                        if i % 4 == 0 {
                            try await shared.perform {
                                post["content"] = .string("edited by \(reader)")
                                try shared.save()
                            }
                        }
                        _ = try shared.fetch(FetchRequest(entityName: "Tag"))
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try container.persistentStoreCoordinator.count(for: FetchRequest(entityName: "Post")) == 20 + 6 * 20)
        let history = try container.persistentStoreCoordinator.fetchHistory(.fetchHistory(after: nil))
        #expect(history.filter { $0.author?.hasPrefix("worker-") ?? false }.count == 6 * 4)
    }

    @Test func viewContextPerformsOnTheMainActor() async throws {
        let container = PersistentContainer(name: "Blog", managedObjectModel: try Fixtures.blogModel())
        container.persistentStoreDescriptions = [.inMemory()]
        try await container.loadPersistentStores()
        #expect(container.viewContext.concurrencyType == .mainQueue)
        // The main queue, whichever thread drains it (swift test parks the main thread in dispatch_main).
        let key = DispatchSpecificKey<Int>()
        DispatchQueue.main.setSpecific(key: key, value: 1)
        let onMain = try await container.viewContext.perform { DispatchQueue.getSpecific(key: key) == 1 }
        #expect(onMain)
        let count = try await container.performBackgroundTask { context in
            let tag = try context.insertNewObject(forEntityName: "Tag")
            tag["name"] = "bg"
            try context.save()
            return try context.count(for: FetchRequest(entityName: "Tag"))
        }
        #expect(count == 1)
    }
}
