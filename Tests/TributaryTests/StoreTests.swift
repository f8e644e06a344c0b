import Foundation
import Testing
@testable import Tributary

@Suite struct StoreTests {
    @Test func createsAndReopensWithTheCachedModel() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("blog.sqlite")
        let first = try Fixtures.blogCoordinator(PersistentStoreDescription(url: url))
        let id = try #require(first.persistentStores.first).identifier
        try Fixtures.seedBlog(first, posts: 5)

        // A tool opens it without the application's model.
        let tool = PersistentStoreCoordinator()
        let store = try tool.addPersistentStore(with: PersistentStoreDescription(url: url))
        #expect(store.identifier == id)
        #expect(store.model == (try Fixtures.blogModel()))
        #expect(try tool.count(for: FetchRequest(entityName: "Post")) == 5)
    }

    @Test func usesWALAndNormalSynchronous() throws {
        let dir = TemporaryDirectory()
        let coordinator = try Fixtures.blogCoordinator(PersistentStoreDescription(url: dir.file("s.sqlite")))
        let store = try coordinator.requireStore()
        let (mode, sync) = try store.database.withWriter { db in
            (try db.scalar("PRAGMA journal_mode")?.stringValue, try db.scalar("PRAGMA synchronous")?.integerValue)
        }
        #expect(mode == "wal")
        #expect(sync == 1)
    }

    @Test func namedInMemoryStoresAreSharedWithinTheProcess() throws {
        let name = "shared-\(UUID().uuidString)"
        let a = try Fixtures.blogCoordinator(.inMemory(named: name))
        let b = try Fixtures.blogCoordinator(.inMemory(named: name))
        try Fixtures.seedBlog(a, posts: 3)
        #expect(try b.count(for: FetchRequest(entityName: "Post")) == 3)
        try b.execute(BatchInsertRequest(entityName: "Tag", objects: [["name": "from-b"]]))
        #expect(try a.count(for: FetchRequest(entityName: "Tag")) == 4)
        #expect(a.persistentStores[0].identifier == b.persistentStores[0].identifier)
    }

    @Test func privateInMemoryStoresAreNotShared() throws {
        let a = try Fixtures.blogCoordinator(.inMemory())
        let b = try Fixtures.blogCoordinator(.inMemory())
        try Fixtures.seedBlog(a, posts: 3)
        #expect(try b.count(for: FetchRequest(entityName: "Post")) == 0)
    }

    @Test func missingFileIsNamedWhenOpeningWithoutModel() throws {
        let error = try #require(throws: TributaryError.self) {
            try PersistentStoreCoordinator().addPersistentStore(with: PersistentStoreDescription(url: URL(fileURLWithPath: "/nonexistent/x.sqlite")))
        }
        #expect(error.code == .fileNotFound)
        #expect(error.location == "/nonexistent/x.sqlite")
    }

    @Test func aFileThatIsNotADatabaseIsRefused() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("notes.txt")
        try Data(String(repeating: "not a database at all\n", count: 100).utf8).write(to: url)
        let error = try #require(throws: TributaryError.self) { try Fixtures.blogCoordinator(PersistentStoreDescription(url: url)) }
        #expect(error.code == .notAStore)
        #expect(error.location == url.path)
        // Nothing was written into the file.
        #expect(try String(contentsOf: url, encoding: .utf8).hasPrefix("not a database"))
    }

    @Test func aForeignSQLiteDatabaseIsRefused() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("other.sqlite")
        let raw = try Connection(path: url.path, options: ConnectionOptions())
        try raw.execute("CREATE TABLE people(name TEXT)")
        let error = try #require(throws: TributaryError.self) { try Fixtures.blogCoordinator(PersistentStoreDescription(url: url)) }
        #expect(error.code == .notAStore)
        #expect(error.message.contains("not a Tributary store"))
    }

    @Test func aNewerFormatIsRefused() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("future.sqlite")
        _ = try Fixtures.blogCoordinator(PersistentStoreDescription(url: url))
        let raw = try Connection(path: url.path, options: ConnectionOptions())
        try raw.execute("UPDATE _tributary_metadata SET value = '99' WHERE key = 'format'")
        let error = try #require(throws: TributaryError.self) { try PersistentStoreCoordinator().addPersistentStore(with: PersistentStoreDescription(url: url)) }
        #expect(error.code == .newerFormat)
        #expect(error.message.contains("format 99"))
    }

    @Test func additiveModelChangesMigrateInPlace() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("m.sqlite")
        let v1 = try ManagedObjectModel { Entity("Note") { Attribute("text", .string, optional: false) } }
        let c1 = PersistentStoreCoordinator(managedObjectModel: v1)
        try c1.addPersistentStore(with: PersistentStoreDescription(url: url))
        try c1.execute(BatchInsertRequest(entityName: "Note", objects: [["text": "old"]]))
        c1.remove(c1.persistentStores[0])

        let v2 = try ManagedObjectModel {
            Entity("Note") {
                Attribute("text", .string, optional: false)
                Attribute("pinned", .bool, optional: false, default: false)
                Attribute("color", .string)
                FetchIndex("color")
            }
            Entity("Folder") { Attribute("name", .string) }
        }
        let c2 = PersistentStoreCoordinator(managedObjectModel: v2)
        try c2.addPersistentStore(with: PersistentStoreDescription(url: url))
        let rows = try c2.fetch(FetchRequest(entityName: "Note"))
        #expect(rows.count == 1)
        #expect(rows[0]["pinned"] == .bool(false))
        #expect(rows[0]["color"] == .null)
        try c2.execute(BatchInsertRequest(entityName: "Folder", objects: [["name": "inbox"]]))
        // The cached model is the new one.
        let tool = PersistentStoreCoordinator()
        #expect(try tool.addPersistentStore(with: PersistentStoreDescription(url: url)).model == v2)
    }

    @Test func incompatibleModelChangesAreNamed() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("m.sqlite")
        let v1 = try ManagedObjectModel { Entity("Note") { Attribute("text", .string) } }
        _ = try PersistentStoreCoordinator(managedObjectModel: v1).addPersistentStore(with: PersistentStoreDescription(url: url))
        let v2 = try ManagedObjectModel { Entity("Note") { Attribute("text", .integer) } }
        let error = try #require(throws: TributaryError.self) {
            try PersistentStoreCoordinator(managedObjectModel: v2).addPersistentStore(with: PersistentStoreDescription(url: url))
        }
        #expect(error.code == .incompatibleModel)
        #expect(error.message.contains("Note.text changed type from string to integer"))
        let v3 = try ManagedObjectModel { Entity("Note") { Attribute("text", .string); Attribute("n", .integer, optional: false) } }
        let required = try #require(throws: TributaryError.self) {
            try PersistentStoreCoordinator(managedObjectModel: v3).addPersistentStore(with: PersistentStoreDescription(url: url))
        }
        #expect(required.message.contains("Note.n is required and has no default"))
    }

    @Test func aLockedStoreTimesOutWithAClearError() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("locked.sqlite")
        let description = PersistentStoreDescription(url: url)
        description.busyTimeout = 0.2
        let coordinator = try Fixtures.blogCoordinator(description)
        let other = try Connection(path: url.path, options: ConnectionOptions())
        try other.execute("BEGIN IMMEDIATE")
        defer { try? other.execute("ROLLBACK") }
        let error = try #require(throws: TributaryError.self) {
            try coordinator.execute(BatchInsertRequest(entityName: "Tag", objects: [["name": "x"]]))
        }
        #expect(error.code == .storeLocked)
        #expect(error.location == url.path)
        // Reads still work while another connection holds the write lock.
        #expect(try coordinator.count(for: FetchRequest(entityName: "Tag")) == 0)
    }

    @Test func destroyEmptiesTheStoreThroughSQLite() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("d.sqlite")
        let coordinator = try Fixtures.blogCoordinator(PersistentStoreDescription(url: url))
        try Fixtures.seedBlog(coordinator, posts: 3)
        coordinator.remove(coordinator.persistentStores[0])
        try coordinator.destroyPersistentStore(at: url)
        // Opening it again creates a fresh store with a new identity.
        let again = try Fixtures.blogCoordinator(PersistentStoreDescription(url: url))
        #expect(try again.count(for: FetchRequest(entityName: "Post")) == 0)
    }

    @Test func destroyWaitsForLocksAndFailsClearly() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("d.sqlite")
        _ = try Fixtures.blogCoordinator(PersistentStoreDescription(url: url))
        let other = try Connection(path: url.path, options: ConnectionOptions())
        try other.execute("BEGIN IMMEDIATE")
        defer { try? other.execute("ROLLBACK") }
        let error = try #require(throws: TributaryError.self) {
            try PersistentStoreCoordinator().destroyPersistentStore(at: url, busyTimeout: 0.2)
        }
        #expect(error.code == .storeLocked)
    }

    @Test func replaceCopiesAStoreThroughTheBackupAPI() throws {
        let dir = TemporaryDirectory()
        let source = dir.file("source.sqlite")
        let target = dir.file("target.sqlite")
        let a = try Fixtures.blogCoordinator(PersistentStoreDescription(url: source))
        try Fixtures.seedBlog(a, posts: 7)
        let b = try Fixtures.blogCoordinator(PersistentStoreDescription(url: target))
        try Fixtures.seedBlog(b, posts: 2, tags: ["other"])
        b.remove(b.persistentStores[0])
        try b.replacePersistentStore(at: target, withStoreAt: source)
        let reopened = PersistentStoreCoordinator()
        let store = try reopened.addPersistentStore(with: PersistentStoreDescription(url: target))
        #expect(store.identifier == a.persistentStores[0].identifier)
        #expect(try reopened.count(for: FetchRequest(entityName: "Post")) == 7)
    }

    @Test func objectIDURIsRoundTrip() throws {
        let coordinator = try Fixtures.blogCoordinator(.inMemory())
        let (_, posts) = try Fixtures.seedBlog(coordinator, posts: 1)
        let id = posts[0]
        #expect(id.uriRepresentation == "tributary://\(id.storeID.uuidString.lowercased())/Post/p\(id.primaryKey)")
        #expect(ObjectID(uriRepresentation: id.uriRepresentation) == id)
        #expect(ObjectID(uriRepresentation: "tributary://nope/Post/p1") == nil)
        #expect(ObjectID(uriRepresentation: "tributary://\(id.storeID.uuidString)/Post/1") == nil)
    }

    @Test func containerLoadsItsDescriptions() async throws {
        let dir = TemporaryDirectory()
        let container = PersistentContainer(name: "Blog", managedObjectModel: try Fixtures.blogModel())
        let description = PersistentStoreDescription(url: dir.file("c.sqlite"))
        description.connectionPoolMaxSize = 2
        container.persistentStoreDescriptions = [description]
        let stores = try await container.loadPersistentStores()
        #expect(stores.count == 1)
        #expect(stores[0].database.readers.maximumSize == 2)
        #expect(container.persistentStoreCoordinator.managedObjectModel == (try Fixtures.blogModel()))
    }
}
