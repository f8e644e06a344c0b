import Foundation
import Testing
@testable import Tributary

/// Issue 19's silent gaps: each works as Core Data's does, or fails with a clear error.
@Suite struct PortingGapsTests {
    private func historyCoordinator() throws -> PersistentStoreCoordinator {
        let description = PersistentStoreDescription.inMemory()
        description.persistentHistoryTracking = true
        return try Fixtures.blogCoordinator(description)
    }

    // MARK: 4. Batch requests run from a context carry its author and name

    @Test func contextBatchRequestsRecordTheContextsAuthorAndName() throws {
        let coordinator = try historyCoordinator()
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        context.transactionAuthor = "app"
        context.name = "importer"
        let start = try coordinator.currentPersistentHistoryToken()
        var insert = BatchInsertRequest(entityName: "Tag", objects: [["name": "a"], ["name": "b"]])
        insert.resultType = .objectIDs
        let ids = try context.execute(insert).objectIDs
        try context.execute(BatchUpdateRequest(entityName: "Tag", propertiesToUpdate: ["color": "red"]))
        try context.execute(BatchDeleteRequest(objectIDs: [ids[0]]))
        var own = BatchUpdateRequest(entityName: "Tag", propertiesToUpdate: ["color": "blue"])
        own.transaction = TransactionMetadata(author: "cloud")   // the request's own author wins
        try context.execute(own)
        let transactions = try #require(try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: start)).transactions)
        #expect(transactions.map(\.author) == ["app", "app", "app", "cloud"])
        #expect(transactions.map(\.contextName) == ["importer", "importer", "importer", "importer"])
        var countRequest = PersistentHistoryChangeRequest.fetchHistory(after: start)
        countRequest.resultType = .count
        guard case .count(let count) = try context.execute(countRequest) else {
            Issue.record("a count request answers with a count"); return
        }
        #expect(count == 4)
    }

    // MARK: 5. A delete-history request with a filter is refused

    @Test func aFilteredHistoryDeleteIsRefusedAndDeletesNothing() throws {
        let coordinator = try historyCoordinator()
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        context.transactionAuthor = "app"
        try context.execute(BatchInsertRequest(entityName: "Tag", objects: [["name": "a"]]))
        var cloud = BatchInsertRequest(entityName: "Tag", objects: [["name": "b"]])
        cloud.transaction = TransactionMetadata(author: "cloudkit")
        try coordinator.execute(cloud)
        var request = PersistentHistoryChangeRequest.deleteHistory(before: try coordinator.currentPersistentHistoryToken())
        request.filter.authors = ["app"]
        let error = try #require(throws: TributaryError.self) { try coordinator.deleteHistory(request) }
        #expect(error.code == .invalidInput)
        #expect(error.message.contains("filter"))
        #expect(try coordinator.fetchHistory(.fetchHistory(after: nil)).count == 2)
    }

    // MARK: 6. Context fetches honour resultType

    @Test func contextFetchesRowsAndIDsThroughItsGeneration() throws {
        let dir = TemporaryDirectory()
        let coordinator = try Fixtures.blogCoordinator(PersistentStoreDescription(url: dir.file("g.sqlite")))
        let (_, posts) = try Fixtures.seedBlog(coordinator, posts: 3)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.setQueryGenerationFrom(.current)
        var request = FetchRequest(entityName: "Post", sortDescriptors: [SortDescriptor("title")])
        request.resultType = .dictionary
        request.propertiesToFetch = ["title"]
        #expect(try context.fetchRows(request).map(\.dictionary) == [["title": "Post 0"], ["title": "Post 1"], ["title": "Post 2"]])
        try coordinator.execute(BatchDeleteRequest(objectIDs: [posts[0]]))   // after the pinned generation
        #expect(try context.fetchRows(request).count == 3)                      // the context's generation
        #expect(try context.fetchObjectIDs(request) == posts)
        #expect(try coordinator.fetch(request).count == 2)                      // the store now
        let error = try #require(throws: TributaryError.self) { try context.fetch(request) }
        #expect(error.hint?.contains("fetchRows") == true)
        request.resultType = .objectID
        #expect(throws: TributaryError.self) { try context.fetch(request) }
        #expect(try context.fetch(FetchRequest(entityName: "Post")).count == 3)   // objects by default
    }

    // MARK: 8. Entity classes come from the model

    final class Quake: ManagedObject, EntityNamed, @unchecked Sendable {
        static let entityName = "Quake"
        @Managed("magnitude") var magnitude: Double
        @Managed("depth") var depth: Float
        @Managed("count") var count: Int16
        @Managed("total") var total: Int32
    }

    static func quakeModel() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity(Quake.self) {
                Attribute("magnitude", .double, optional: false, default: 0)
                Attribute("depth", .double, default: 0)
                Attribute("count", .integer, default: 0)
                Attribute("total", .integer, default: 0)
            }
        }
    }

    @Test func entityClassesComeFromTheModel() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.quakeModel())
        try coordinator.addPersistentStore(with: .inMemory())
        try coordinator.execute(BatchInsertRequest(entityName: "Quake", objects: [["magnitude": 4.5]]))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let object = try #require(try context.fetch(FetchRequest(entityName: "Quake")).first)
        let quake = try #require(object as? Quake)   // no registerSubclass
        #expect(quake.magnitude == 4.5)
        #expect(try Self.quakeModel() == (try ManagedObjectModel { Entity("Quake") {
            Attribute("magnitude", .double, optional: false, default: 0)
            Attribute("depth", .double, default: 0)
            Attribute("count", .integer, default: 0)
            Attribute("total", .integer, default: 0)
        } }))   // the class is not part of the model's value
    }

    @Test func aYAMLModelRegistersItsClasses() throws {
        var model = try ManagedObjectModel(yaml: "entities:\n  Quake:\n    attributes:\n      magnitude: { type: double, default: 0 }\n      depth: float\n      count: int16\n      total: int32\n")
        try model.registerSubclass(Quake.self)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(with: .inMemory())
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let object = try context.insertNewObject(forEntityName: "Quake")
        #expect(object is Quake)
    }

    // MARK: Int16, Int32, Float

    @Test func sizedNumbersReadAndWrite() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.quakeModel())
        try coordinator.addPersistentStore(with: .inMemory())
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let quake = try context.insert(Quake.self)
        quake.depth = 10.5
        quake.count = 300
        quake.total = 70_000
        try context.save()
        let reread = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let again = try #require(try reread.fetch(Quake.self).first)
        #expect(again.depth == 10.5)
        #expect(again.count == 300)
        #expect(again.total == 70_000)
        again["count"] = .integer(40_000)   // too big for an Int16
        #expect(throws: TributaryError.self) { try again.value(forKey: "count", as: Int16.self) }
    }

    // MARK: Batch requests

    @Test func batchDeleteByObjectIDs() throws {
        let coordinator = try Fixtures.blogCoordinator(.inMemory())
        let (_, posts) = try Fixtures.seedBlog(coordinator, posts: 4)
        #expect(try coordinator.execute(BatchDeleteRequest(objectIDs: [posts[0], posts[2]])).count == 2)
        #expect(try coordinator.execute(BatchDeleteRequest(objectIDs: [])).count == 0)   // nothing, never everything
        #expect(try coordinator.fetchObjectIDs(FetchRequest(entityName: "Post")) == [posts[1], posts[3]])
        let result = BatchResult(count: 1, deleted: 1, objectIDs: [posts[1]])
        #expect(result.deleted == 1 && result.objectIDs == [posts[1]])
    }
}

extension PortingGapsTests {
    @Test func typedFetchRequests() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.quakeModel())
        try coordinator.addPersistentStore(with: .inMemory())
        try coordinator.execute(BatchInsertRequest(entityName: "Quake", objects: (0..<10).map { ["magnitude": .double(Double($0))] }))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        var request = Quake.fetchRequest()
        request.predicate = try StorePredicate(format: "magnitude >= %@", 3.0)
        request.sortDescriptors = [SortDescriptor("magnitude", ascending: false)]
        request.fetchLimit = 2
        request.fetchBatchSize = 1
        let quakes: [Quake] = try context.fetch(request)
        #expect(quakes.map(\.magnitude) == [9, 8])
        #expect(try context.count(for: request) == 2)
    }
}

// MARK: 7. Store descriptions are set in place, and locked once a store opens with them

extension PortingGapsTests {
    @Test func containerDescriptionsAreSetInPlace() async throws {
        let container = PersistentContainer(name: "Quakes", managedObjectModel: try Fixtures.blogModel())
        container.persistentStoreDescriptions = [.inMemory()]
        container.persistentStoreDescriptions.first?.persistentHistoryTracking = true   // Core Data's idiom
        container.persistentStoreDescriptions.first?.remoteChangeNotificationPost = true
        let stores = try await container.loadPersistentStores()
        #expect(stores[0].isHistoryTracked)
        #expect(stores[0].description.remoteChangeNotificationPost)
        #expect(container.persistentStoreDescriptions.first?.isLocked == true)
        let copy = stores[0].description.copy()
        copy.isReadOnly = true   // a copy is unlocked and separate
        #expect(!stores[0].description.isReadOnly && !copy.isLocked)
    }

    @Test func aDescriptionThatFailedToOpenCanBeFixed() throws {
        let dir = TemporaryDirectory()
        let description = PersistentStoreDescription(url: dir.file("missing/q.sqlite"))
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Fixtures.blogModel())
        #expect(throws: TributaryError.self) { try coordinator.addPersistentStore(with: description) }
        #expect(!description.isLocked)
        description.url = dir.file("q.sqlite")
        try coordinator.addPersistentStore(with: description)
        #expect(description.isLocked)
    }

    /// A change after loading stops the program (a precondition naming the property); that
    /// is not run here: Swift Testing's exit tests watch every child process of the test
    /// process on Linux, and with one in the suite the server harness's kills were seen to
    /// hang. What is checked is the state the precondition reads.
    @Test func aDescriptionLoadedByAContainerIsLocked() async throws {
        let container = PersistentContainer(name: "Quakes", managedObjectModel: try Fixtures.blogModel())
        container.persistentStoreDescriptions = [.inMemory()]
        #expect(container.persistentStoreDescriptions.first?.isLocked == false)
        try await container.loadPersistentStores()
        #expect(container.persistentStoreDescriptions.first?.isLocked == true)
    }
}

extension PortingGapsTests {
    @Test func undoManagerIsANilNoOp() throws {
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: try Fixtures.blogCoordinator(.inMemory()))
        context.undoManager = nil   // Core Data's idiom compiles
        #expect(context.undoManager == nil)
    }

    @Test func propertiesToFetchTakeKeyPaths() throws {
        let coordinator = try Fixtures.blogCoordinator(.inMemory())
        try Fixtures.seedBlog(coordinator, posts: 3, tags: ["swift", "sqlite"])
        var request = FetchRequest(entityName: "Post", sortDescriptors: [SortDescriptor("title")])
        request.propertiesToFetch = ["title", "tags.@count", "tags.@min.name"]
        let rows = try coordinator.fetch(request).map(\.dictionary)
        #expect(rows.first == ["title": "Post 0", "tags.@count": 1, "tags.@min.name": "swift"])
        var attachments = FetchRequest(entityName: "Attachment")
        attachments.propertiesToFetch = ["fileName", "post.title"]
        #expect(try coordinator.fetch(attachments).isEmpty)   // resolves through the to-one relationship
        attachments.propertiesToFetch = ["post.nothing"]
        #expect(throws: TributaryError.self) { try coordinator.fetch(attachments) }
    }
}

extension PortingGapsTests {
    @Test func batchInsertFromAHandlerStreamsInOneTransaction() throws {
        let coordinator = try historyCoordinator()
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        context.transactionAuthor = "feed"
        let start = try coordinator.currentPersistentHistoryToken()
        var index = 0
        var request = BatchInsertRequest(entityName: "Tag", objects: [])
        request.resultType = .objectIDs
        let result = try context.execute(request) { object in
            guard index < 2_500 else { return true }
            object = ["name": .string("tag-\(index)")]
            index += 1
            return false
        }
        #expect(result.count == 2_500 && result.inserted == 2_500 && result.objectIDs.count == 2_500)
        #expect(try coordinator.count(for: FetchRequest(entityName: "Tag")) == 2_500)
        let transactions = try coordinator.fetchHistory(.fetchHistory(after: start))
        #expect(transactions.count == 1 && transactions.first?.author == "feed")

        struct Broken: Error {}
        var calls = 0
        #expect(throws: Broken.self) {
            try coordinator.execute(BatchInsertRequest(entityName: "Tag", objects: [])) { object in
                calls += 1
                if calls > 1_500 { throw Broken() }   // after one chunk was inserted
                object = ["name": .string("more-\(calls)")]
                return false
            }
        }
        #expect(try coordinator.count(for: FetchRequest(entityName: "Tag")) == 2_500)   // nothing of the failed batch
    }
}

extension PortingGapsTests {
    @Test func fetchesCanIncludePendingChanges() throws {
        let coordinator = try Fixtures.blogCoordinator(.inMemory())
        let (_, posts) = try Fixtures.seedBlog(coordinator, posts: 5)   // Post 0 … Post 4
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let post = try context.insertNewObject(forEntityName: "Post")
        post["title"] = "Post 2a"
        post["externalID"] = "new"
        post["createdAt"] = .date(Date())
        try context.object(with: posts[4])["title"] = "Post 0a"   // moves
        try context.object(with: posts[1])["title"] = "Zed"       // leaves the predicate
        context.delete(try context.object(with: posts[3]))
        var request = FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "title BEGINSWITH 'Post'"), sortDescriptors: [SortDescriptor("title")])
        request.includesPendingChanges = true
        #expect(try context.fetch(request).map { $0["title"] } == ["Post 0", "Post 0a", "Post 2", "Post 2a"])
        request.fetchLimit = 2
        request.fetchOffset = 1
        #expect(try context.fetch(request).map { $0["title"] } == ["Post 0a", "Post 2"])
        request.includesPendingChanges = false   // the default: what is saved
        request.fetchLimit = 0
        request.fetchOffset = 0
        #expect(try context.fetch(request).map(\.objectID) == [posts[0], posts[1], posts[2], posts[4]])
        request.includesPendingChanges = true
        request.predicate = try StorePredicate(format: "ANY tags.name == 'swift'")   // not evaluable on unsaved objects
        #expect(throws: TributaryError.self) { try context.fetch(request) }
    }
}
