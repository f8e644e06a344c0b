import Foundation
import Testing
import Tributary
import TributaryPipeline
import TributaryPostgresSink
import TributaryStreams
import TributaryTestSupport

/// Schema records through a pipeline into a real PostgreSQL mirror (issue 23): an additive
/// model change is applied in the transaction of its position; another program's DDL on an
/// adopted database reaches the mirror; a change that is not additive stops the pipeline
/// under `on_schema_change: stop`, is applied under `apply` and set aside under `dead_letter`.
@Suite(.serialized, .timeLimit(.minutes(10)), .tags(.servers)) struct PostgresSchemaChangeTests {
    func columns(_ server: LocalServer, _ schema: String, _ table: String) throws -> [String] {
        try PostgresMirror.query(server, "SELECT column_name FROM information_schema.columns WHERE table_schema = '\(schema)' AND table_name = '\(table)' ORDER BY ordinal_position")
    }

    @Test func anAdditiveMigrationMidStreamReachesTheMirrorInItsPlace() async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        let dir = TemporaryDirectory()
        let url = dir.url.appendingPathComponent("blog.sqlite")
        let pipeline = try PostgresMirror.snapshotPipeline(server, store: url.path, name: "grows")
        do {
            let store = try PipelineFixtures.store(at: url)
            try PipelineFixtures.insertPosts(store, count: 5)
            try await PostgresMirror.runToCatchUp(pipeline, store)
            try PipelineFixtures.insertPosts(store, count: 3, from: 5)   // after the mirror's position, before the change
        }
        // The source's model grows: Post.views, an integer defaulting to 7.
        var entities = try ManagedObjectModel(yamlFile: PipelineFixtures.repositoryRoot.appendingPathComponent("examples/blog/model.yml")).entities
        let post = entities.firstIndex { $0.name == "Post" }!
        entities[post].attributes.append(AttributeDescription(name: "views", type: .integer, defaultValue: .integer(7)))
        let grown = try ManagedObjectModel(entities: entities)
        let description = PersistentStoreDescription(url: url)
        description.persistentHistoryTracking = true
        let store = PersistentStoreCoordinator(managedObjectModel: grown)
        try store.addPersistentStore(with: description)
        var request = BatchInsertRequest(entityName: "Post", objects: [["externalID": .string("new"), "title": .string("New"), "createdAt": .date(Date()), "views": .integer(42)]])
        request.resultType = .objectIDs
        _ = try store.execute(request)
        #expect(try !columns(server, "grows", "Post").contains("views"))

        try await PostgresMirror.runToCatchUp(pipeline, store)
        #expect(try columns(server, "grows", "Post").last == "views")
        try PostgresMirror.expectEqual(server, store, schema: "grows", entities: ["Post"], count: 9)
        #expect(try PostgresMirror.query(server, "SELECT views FROM grows.\"Post\" WHERE \"externalID\" = 'new'") == ["42"])
        #expect(try PostgresMirror.checkpoint(server, schema: "grows", pipeline: "grows") == "\(try store.currentPersistentHistoryToken().value).0")
    }

    @Test func aRenameThroughTributaryMigrateIsCarriedToTheMirror() async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        let dir = TemporaryDirectory()
        let url = dir.url.appendingPathComponent("blog.sqlite")
        let text = "name: renames\nsource: {store: \(url.path), snapshot: true}\non_schema_change: apply\nsinks:\n  - type: postgres\n    url: ${POSTGRES_URL}\n    schema: renames\n"
        let pipeline = try PipelineFixtures.pipeline(text, environment: ["POSTGRES_URL": server.url])
        do {
            let store = try PipelineFixtures.store(at: url)
            try PipelineFixtures.insertPosts(store, count: 4)
            try await PostgresMirror.runToCatchUp(pipeline, store)
        }
        let store = try PipelineFixtures.migrateBlog(at: url) { entities in
            let post = entities.firstIndex { $0.name == "Post" }!
            let content = entities[post].attributes.firstIndex { $0.name == "content" }!
            entities[post].attributes[content].name = "body"
            entities[post].attributes[content].renamingIdentifier = "content"
        }
        try store.execute(BatchInsertRequest(entityName: "Post", objects: [["externalID": "new", "title": "New", "body": "new body", "createdAt": .date(Date())]]))

        try await PostgresMirror.runToCatchUp(pipeline, store)
        let names = try columns(server, "renames", "Post")
        #expect(names.contains("body") && !names.contains("content"), "\(names)")
        try PostgresMirror.expectEqual(server, store, schema: "renames", entities: ["Post"], count: 5)
    }

    /// An adopted database, mirrored, then changed by the `sqlite3` shell.
    struct Adopted {
        let server: LocalServer
        let dir = TemporaryDirectory()
        var path: String { dir.url.appendingPathComponent("app.db").path }

        func shell(_ sql: String) throws {
            let result = try TributaryProcess.run([path], stdin: ".timeout 5000\n" + sql, executable: URL(fileURLWithPath: "/usr/bin/sqlite3"))
            #expect(result.status == 0, "\(result.stderr)")
        }

        func open() throws -> PersistentStoreCoordinator {
            let store = PersistentStoreCoordinator()
            try store.addPersistentStore(with: PersistentStoreDescription(url: URL(fileURLWithPath: path)))
            return store
        }

        func pipeline(_ extra: String = "") throws -> PipelineFile {
            let text = "name: app\nsource: {store: \(path), snapshot: true}\n\(extra)sinks:\n  - type: postgres\n    url: ${POSTGRES_URL}\n    schema: app\n"
            return try PipelineFixtures.pipeline(text, environment: ["POSTGRES_URL": server.url])
        }

        init(server: LocalServer) throws {
            self.server = server
            try shell("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, price REAL); INSERT INTO items VALUES (1, 'one', 1.5), (2, 'two', 2.5);")
            _ = try PersistentStoreCoordinator.adoptDatabase(at: URL(fileURLWithPath: path))
        }
    }

    @Test func aColumnAnotherProgramAddsIsRecordedAndAppliedByTheMirror() async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        let app = try Adopted(server: server)
        try await PostgresMirror.runToCatchUp(try app.pipeline(), try app.open())
        try app.shell("ALTER TABLE items ADD COLUMN color TEXT;")
        let detected = try app.open().schemaChanges()
        #expect(detected.map(\.change.changes) == [["added items.color"]] && detected.first?.change.isDetected == true)
        _ = try PersistentStoreCoordinator.adoptDatabase(at: URL(fileURLWithPath: app.path))   // captures the new column from now on
        try app.shell("INSERT INTO items VALUES (3, 'three', 3.5, 'red'); UPDATE items SET color = 'blue' WHERE id = 1;")
        try await PostgresMirror.runToCatchUp(try app.pipeline(), try app.open())
        #expect(try columns(server, "app", "items") == ["id", "name", "price", "color"])
        #expect(try PostgresMirror.query(server, "SELECT id, name, coalesce(color, '∅') FROM app.items ORDER BY id") == ["1|one|blue", "2|two|∅", "3|three|red"])
    }

    @Test func aDroppedColumnStopsThePipelineUnderStopAndIsDroppedUnderApply() async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        let app = try Adopted(server: server)
        try await PostgresMirror.runToCatchUp(try app.pipeline(), try app.open())
        try app.shell("PRAGMA legacy_alter_table = ON; ALTER TABLE items DROP COLUMN price;")
        try app.shell("INSERT INTO items VALUES (3, 'three');")
        let store = try app.open()
        #expect(try store.schemaChanges().map(\.change.changes) == [["removed items.price"]])
        #expect(try store.fetchHistory(.fetchHistory(after: nil)).first?.changes.first?.properties.first { $0.name == "price" }.map { $0.isValueExcluded && $0.after == nil } == true,
                "a column dropped before the fold is recorded without a value: not NULL, not its quoted name")
        let stopped = await #expect(throws: TributaryError.self) { try await PostgresMirror.runToCatchUp(try app.pipeline(), store) }
        #expect(stopped?.code == .pipelineStopped)
        #expect(stopped?.message.contains("removed items.price") == true && stopped?.hint?.contains("on_schema_change: apply") == true, "\(String(describing: stopped))")
        #expect(try columns(server, "app", "items").contains("price"), "nothing applied under stop")

        try await PostgresMirror.runToCatchUp(try app.pipeline("on_schema_change: apply\n"), store)
        #expect(try columns(server, "app", "items") == ["id", "name"])
        #expect(try PostgresMirror.query(server, "SELECT id, name FROM app.items ORDER BY id") == ["1|one", "2|two", "3|three"])
    }

    @Test func aDroppedColumnIsSetAsideUnderDeadLetterAndThePipelineGoesOn() async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        let app = try Adopted(server: server)
        let letters = app.dir.url.appendingPathComponent("dead-letters")
        func pipeline() throws -> PipelineFile {
            let text = "name: app\nsource: {store: \(app.path), snapshot: true}\non_schema_change: dead_letter\nsinks:\n  - type: postgres\n    url: ${POSTGRES_URL}\n    schema: app\n    dead_letter: \(letters.path)\n"
            return try PipelineFixtures.pipeline(text, environment: ["POSTGRES_URL": server.url])
        }
        try await PostgresMirror.runToCatchUp(try pipeline(), try app.open())
        try app.shell("PRAGMA legacy_alter_table = ON; ALTER TABLE items DROP COLUMN price;")
        try app.shell("INSERT INTO items VALUES (3, 'three');")
        let store = try app.open()
        let change = try #require(try store.schemaChanges().last)

        try await PostgresMirror.runToCatchUp(try pipeline(), store)
        #expect(try columns(server, "app", "items").contains("price"), "the mirror's copy is left as it was")
        #expect(try PostgresMirror.query(server, "SELECT id, name FROM app.items ORDER BY id") == ["1|one", "2|two", "3|three"], "the records after the change still arrive")
        let lines = try DeadLetterWriter.lines(in: letters)
        #expect(lines.count == 1, "\(lines)")
        #expect(lines.first?.contains("\"sink\":\"postgres\"") == true && lines.first?.contains("on_schema_change: dead_letter") == true
                && lines.first?.contains("\"type\":\"schema\"") == true && lines.first?.contains("removed items.price") == true, "\(lines)")
        #expect(lines.first?.contains("\"id\":\"\(SchemaRecord(change, storeID: store.persistentStores[0].identifier).eventID)\"") == true)
    }
}
