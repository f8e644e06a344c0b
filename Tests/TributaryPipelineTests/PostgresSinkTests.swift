import Foundation
import Testing
import Tributary
import TributaryPipeline
import TributaryStreams
import TributaryTestSupport
import TributaryPostgresSink

/// Reads a PostgreSQL mirror back with `psql`, and renders a store's rows the same way, so
/// tests compare every column of every row.
enum PostgresMirror {
    /// The rows `sql` returns, one line each, fields separated by `|`, NULL as `∅`.
    static func query(_ server: LocalServer, _ sql: String) throws -> [String] { try PostgresServer.query(server, sql) }

    /// Every row of `entities`' mirror tables in `schema` as `Entity|pk|value|…` (columns in
    /// model order, history-excluded attributes left out), sorted.
    static func rows(_ server: LocalServer, schema: String, model: ManagedObjectModel, entities: [String], tables: [String: String] = [:]) throws -> [String] {
        let mirror = PostgresMirrorSchema(model: model, schema: schema, tables: tables)
        var lines: [String] = []
        for entity in entities {
            let table = mirror.tables[entity]!
            let excluded = Set(table.entity.attributes.filter(\.isExcludedFromHistory).map(\.name))
            let columns = table.columns.filter { !excluded.contains($0.name) }.map { column -> String in
                let name = PostgresMirrorSchema.quote(column.name)
                // Dates as the microseconds since 2000 postgres-nio sent, so both sides render them alike.
                return column.type == "timestamptz" ? "(extract(epoch from (\(name) - timestamptz '2000-01-01 00:00:00+00')) * 1000000)::bigint" : name
            }
            let select = (["'\(entity)'", "\"_pk\""] + columns).joined(separator: ", ")
            lines += try query(server, "SELECT \(select) FROM \(mirror.qualified(table.name))")
            for (relationship, join) in table.joinTables.sorted(by: { $0.key < $1.key }) {
                lines += try query(server, "SELECT '\(entity).\(relationship)', src, dst FROM \(mirror.qualified(join))")
            }
        }
        return lines.sorted()
    }

    /// The store's rows of `entities`, rendered as ``rows(_:schema:model:entities:tables:)`` renders the mirror's,
    /// without the attributes named in `omitting`.
    static func storeRows(_ coordinator: PersistentStoreCoordinator, entities: [String], omitting: Set<String> = []) throws -> [String] {
        var lines: [String] = []
        try coordinator.enumerateSnapshot(entities: entities, begin: { _ in }) { object in
            var fields = [object.objectID.entityName, String(object.objectID.primaryKey)]
            for property in object.properties where !property.isValueExcluded && !property.isMembershipChange && !omitting.contains(property.name) {
                fields.append(render(property.after ?? .null))
            }
            lines.append(fields.joined(separator: "|"))
            for property in object.properties where property.isMembershipChange {
                for target in property.added { lines.append("\(object.objectID.entityName).\(property.name)|\(object.objectID.primaryKey)|\(target.primaryKey)") }
            }
        }
        return lines.sorted()
    }

    static func render(_ value: AttributeValue) -> String {
        switch value {
        case .null: return "∅"
        case .string(let text): return text
        case .integer(let number): return String(number)
        case .double(let number): return number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)   // as PostgreSQL prints float8
        case .bool(let flag): return flag ? "t" : "f"
        case .date(let date): return String(Int64(date.timeIntervalSince(Date(timeIntervalSince1970: 946_684_800)) * 1_000_000))
        case .uuid(let uuid): return uuid.uuidString.lowercased()
        case .data(let data): return "\\x" + data.map { String(format: "%02x", $0) }.joined()
        case .objectID(let object): return String(object.primaryKey)
        case .array(let items): return items.map(render).joined(separator: ",")
        }
    }

    /// Expects the mirror's rows of `entities` to equal the store's, showing the first differences.
    static func expectEqual(_ server: LocalServer, _ store: PersistentStoreCoordinator, schema: String, entities: [String], count: Int? = nil,
                            sourceLocation: SourceLocation = #_sourceLocation) throws {
        let mirrored = try rows(server, schema: schema, model: store.persistentStores[0].model, entities: entities)
        let expected = try storeRows(store, entities: entities)
        if let count { #expect(expected.filter { !$0.contains(".") }.count == count, sourceLocation: sourceLocation) }
        let missing = Set(expected).subtracting(mirrored), extra = Set(mirrored).subtracting(expected)
        let equal = mirrored == expected
        #expect(equal, "\(mirrored.count) rows mirrored, \(expected.count) in the store; missing: \(missing.sorted().prefix(3)); extra: \(extra.sorted().prefix(3))",
                sourceLocation: sourceLocation)
    }

    /// A pipeline `name` that mirrors the store at `path`, snapshot first, into schema `name`.
    static func snapshotPipeline(_ server: LocalServer, store path: String, name: String) throws -> PipelineFile {
        let text = "name: \(name)\nsource: {store: \(path), snapshot: true}\nsinks:\n  - type: postgres\n    url: ${POSTGRES_URL}\n    schema: \(name)\n"
        return try PipelineFixtures.pipeline(text, environment: ["POSTGRES_URL": server.url])
    }

    /// Runs `pipeline` over `store` until it has caught up, then finishes it.
    static func runToCatchUp(_ pipeline: PipelineFile, _ store: PersistentStoreCoordinator) async throws {
        let runner = try PipelineRunner(pipeline: pipeline, coordinator: store, sinks: pipeline.sinks.map { PipelineRunner.makeSink($0) })
        while try await !runner.runOnce().caughtUp {}
        try await runner.finish()
    }

    /// The position the checkpoint table holds for `pipeline`, as `token.index` (`r` for snapshots).
    static func checkpoint(_ server: LocalServer, schema: String = "public", pipeline: String) throws -> String? {
        try query(server, "SELECT token || '.' || CASE WHEN snapshot THEN 'r' ELSE '' END || \"index\" FROM \(PostgresMirrorSchema.quote(schema)).tributary_checkpoints WHERE pipeline = '\(pipeline)'").first
    }
}

/// The PostgreSQL sink against a real server: the shared sink suite, settings, and refused records under each `on_error`.
@Suite(.serialized, .timeLimit(.minutes(10)), .tags(.servers)) struct PostgresSinkTests {
    static func settings(_ server: LocalServer, schema: String, createTables: Bool = true) throws -> PostgresSinkSettings {
        PostgresSinkSettings(endpoint: try PostgresEndpoint(parsing: server.url), schema: schema, createTables: createTables)
    }

    @Test func passesTheSharedSinkSuite() async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        func underTest(_ schema: String) throws -> SinkUnderTest {
            let settings = try Self.settings(server, schema: schema)
            return SinkUnderTest(make: { PostgresSink(name: "postgres", settings: settings) }, effect: {
                try PostgresMirror.query(server, "SELECT row_to_json(p)::text FROM \"\(schema)\".\"Post\" p ORDER BY \"_pk\"")
            })
        }
        try await SinkSuite.run(clean: try underTest("clean"), crashed: try underTest("crashed"))
        let rows = try PostgresMirror.query(server, "SELECT \"_pk\", title, content FROM crashed.\"Post\" ORDER BY \"_pk\"")
        #expect(rows.count == 9, "12 posts inserted, 3 deleted")
        #expect(rows.first == "1|Edited 0 sqlite|Body 1 linux", "updates apply their after values")
        #expect(rows.contains("4|Post 4 about swift|Body 4 linux"))
        #expect(try PostgresMirror.checkpoint(server, schema: "crashed", pipeline: "suite") == "14.0", "the filtered-out tail is checkpointed too")
    }

    @Test func mirrorsEveryColumnTypeAndLinkFromASnapshotAndHistory() async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        let dir = TemporaryDirectory()
        let model = try ManagedObjectModel(entities: [
            EntityDescription(name: "Item", attributes: [
                AttributeDescription(name: "name", type: .string), AttributeDescription(name: "count", type: .integer), AttributeDescription(name: "score", type: .double),
                AttributeDescription(name: "done", type: .bool), AttributeDescription(name: "due", type: .date), AttributeDescription(name: "ref", type: .uuid),
                AttributeDescription(name: "blob", type: .binary),
            ], relationships: [
                RelationshipDescription(name: "owner", destinationEntity: "Owner", inverseName: "items"),
                RelationshipDescription(name: "labels", destinationEntity: "Label", inverseName: "items", isToMany: true),
            ], uniquenessConstraints: [["name"]]),
            EntityDescription(name: "Owner", attributes: [AttributeDescription(name: "name", type: .string)],
                              relationships: [RelationshipDescription(name: "items", destinationEntity: "Item", inverseName: "owner", isToMany: true)]),
            EntityDescription(name: "Label", attributes: [AttributeDescription(name: "name", type: .string)],
                              relationships: [RelationshipDescription(name: "items", destinationEntity: "Item", inverseName: "labels", isToMany: true)]),
        ])
        let description = PersistentStoreDescription(url: dir.url.appendingPathComponent("s.sqlite"))
        description.persistentHistoryTracking = true
        let store = PersistentStoreCoordinator(managedObjectModel: model)
        try store.addPersistentStore(with: description)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: store)
        func insert(_ round: Int) throws {
            try context.performAndWait {
                let owner = try context.insertNewObject(forEntityName: "Owner")
                try owner.setValue(.string("owner \(round)"), forKey: "name")
                let label = try context.insertNewObject(forEntityName: "Label")
                try label.setValue(.string("label \(round)"), forKey: "name")
                for i in 0..<3 {
                    let item = try context.insertNewObject(forEntityName: "Item")
                    let values: [String: AttributeValue] = [
                        "name": .string("item \(round)-\(i)"), "count": .integer(Int64(i * 1_000_000_007)), "score": .double(Double(i) / 3),
                        "done": .bool(i % 2 == 0), "due": .date(Date(timeIntervalSince1970: 1_700_000_000.123456 + Double(i))), "ref": .uuid(UUID()),
                        "blob": .data(Data([UInt8(i), 0, 255])),
                    ]
                    for (key, value) in values { try item.setValue(value, forKey: key) }
                    try item.add(owner, toRelationship: "owner")
                    try item.add(label, toRelationship: "labels")
                }
                try context.save()
            }
        }
        try insert(0)
        let pipeline = try PostgresMirror.snapshotPipeline(server, store: dir.path("s.sqlite"), name: "types")
        func run() async throws { try await PostgresMirror.runToCatchUp(pipeline, store) }
        try await run()
        let entities = ["Item", "Label", "Owner"]
        try PostgresMirror.expectEqual(server, store, schema: "types", entities: entities)
        #expect(try PostgresMirror.checkpoint(server, schema: "types", pipeline: "types")?.contains(".r") == true, "a snapshot's position")
        // Then history: more inserts, an update of every type, a link removed, a delete.
        try insert(1)
        try context.performAndWait {
            let items = try context.fetch(FetchRequest(entityName: "Item", sortDescriptors: [SortDescriptor("name")]))
            try items[0].setValue(.double(-2.5), forKey: "score")
            try items[0].setValue(.bool(false), forKey: "done")
            try items[0].setValue(.null, forKey: "due")
            for label in try items[1].destinations(forRelationship: "labels") { try items[1].remove(label, fromRelationship: "labels") }
            context.delete(items[2])
            try context.save()
        }
        try await run()
        try PostgresMirror.expectEqual(server, store, schema: "types", entities: entities)
        let columns = try PostgresMirror.query(server, "SELECT column_name || ' ' || data_type FROM information_schema.columns WHERE table_schema = 'types' AND table_name = 'Item' ORDER BY ordinal_position")
        #expect(columns == ["_pk bigint", "name text", "count bigint", "score double precision", "done boolean", "due timestamp with time zone", "ref uuid", "blob bytea", "owner bigint"])
        #expect(try PostgresMirror.query(server, "SELECT count(*) FROM pg_constraint WHERE conname LIKE 'Item_name%' AND contype = 'u'") == ["1"], "the unique constraint is kept")
    }

    /// An adopted database (issue 22): a table keyed by its INTEGER PRIMARY KEY is mirrored
    /// under that column's name, one keyed by its rowid under `_pk`, a foreign key (a to-one
    /// relationship) as its column; the sqlite3 shell's writes reach the mirror like any other.
    @Test func anAdoptedDatabaseIsMirroredUnderItsDeclaredKeys() async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        let dir = TemporaryDirectory()
        let path = dir.path("app.db")
        func shell(_ sql: String) throws {
            let result = try TributaryProcess.run([path], stdin: ".timeout 5000\n" + sql, executable: URL(fileURLWithPath: "/usr/bin/sqlite3"))
            #expect(result.status == 0, "\(result.stderr)")
        }
        try shell("""
            CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT NOT NULL UNIQUE, name TEXT);
            CREATE TABLE events (kind TEXT, weight REAL);
            CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, owner_id INTEGER REFERENCES users(id));
            INSERT INTO users VALUES (10, 'ann@example.com', 'Ann'), (20, 'bob@example.com', 'Bob');
            INSERT INTO events VALUES ('signup', 1.5);
            INSERT INTO notes VALUES (1, 'hi', 20);
            """)
        _ = try PersistentStoreCoordinator.adoptDatabase(at: URL(fileURLWithPath: path))
        let store = PersistentStoreCoordinator()
        let description = PersistentStoreDescription(url: URL(fileURLWithPath: path))
        description.persistentHistoryTracking = true
        try store.addPersistentStore(with: description)
        let pipeline = try PostgresMirror.snapshotPipeline(server, store: path, name: "adopted")
        func run() async throws { try await PostgresMirror.runToCatchUp(pipeline, store) }
        try await run()
        let columns = try PostgresMirror.query(server, "SELECT table_name || '.' || column_name FROM information_schema.columns WHERE table_schema = 'adopted' AND table_name <> 'tributary_checkpoints' ORDER BY table_name, ordinal_position")
        #expect(columns == ["events._pk", "events.kind", "events.weight", "notes.id", "notes.body", "notes.owner_id", "users.id", "users.email", "users.name"])
        #expect(try PostgresMirror.query(server, "SELECT id, body, owner_id FROM adopted.notes") == ["1|hi|20"], "the foreign key, a relationship, is mirrored as its key")
        #expect(try PostgresMirror.query(server, "SELECT id, email, name FROM adopted.users ORDER BY id") == ["10|ann@example.com|Ann", "20|bob@example.com|Bob"])
        try shell("UPDATE users SET name = 'Annie' WHERE id = 10; DELETE FROM users WHERE id = 20; INSERT INTO users VALUES (30, 'cy@example.com', NULL); UPDATE notes SET owner_id = 30;")
        try await run()
        #expect(try PostgresMirror.query(server, "SELECT id, email, coalesce(name, '∅') FROM adopted.users ORDER BY id") == ["10|ann@example.com|Annie", "30|cy@example.com|∅"])
        #expect(try PostgresMirror.query(server, "SELECT \"_pk\", kind, weight FROM adopted.events") == ["1|signup|1.5"])
        #expect(try PostgresMirror.query(server, "SELECT id, body, owner_id FROM adopted.notes") == ["1|hi|30"])
    }

    /// Batches commit asynchronously and only checkpoints flush: when the server loses the
    /// commits since the last flush (an operating-system crash; here the rows and the position
    /// are put back by hand and the connection is cut), the sink applies them again.
    @Test func commitsTheServerLostAreAppliedAgain() async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        func effect(_ schema: String) throws -> [String] {
            try PostgresMirror.query(server, "SELECT row_to_json(p)::text FROM \"\(schema)\".\"Post\" p ORDER BY \"_pk\"")
        }
        let chunks = SinkSuite.chunks(after: nil)
        let clean = PostgresSink(name: "postgres", settings: try Self.settings(server, schema: "clean"))
        _ = try await clean.open(SinkSuite.context)
        for chunk in chunks { try await clean.deliver(chunk) }
        _ = try await clean.checkpoint(through: chunks.last!.last!.position)
        try await clean.close()

        let sink = PostgresSink(name: "postgres", settings: try Self.settings(server, schema: "lost"))
        _ = try await sink.open(SinkSuite.context)
        try await sink.deliver(chunks[0])
        let flushed = try await sink.checkpoint(through: chunks[0].last!.position)
        #expect(flushed == chunks[0].last!.position)
        _ = try PostgresMirror.query(server, "CREATE TABLE lost.saved AS SELECT * FROM lost.\"Post\"; CREATE TABLE lost.saved_position AS SELECT * FROM lost.tributary_checkpoints")
        try await sink.deliver(chunks[1])
        try await sink.deliver(chunks[2])
        #expect(try PostgresMirror.checkpoint(server, schema: "lost", pipeline: "suite") == "\(chunks[2].last!.position.token).\(chunks[2].last!.position.index)")
        // The commits of chunks 1 and 2 are lost: the rows and position as at the flush, and the connection cut.
        _ = try PostgresMirror.query(server, "DELETE FROM lost.\"Post\"; INSERT INTO lost.\"Post\" SELECT * FROM lost.saved; "
                                     + "DELETE FROM lost.tributary_checkpoints; INSERT INTO lost.tributary_checkpoints SELECT * FROM lost.saved_position; "
                                     + "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = current_database()")
        // The runtime retries a delivery that failed on the cut connection.
        for chunk in chunks.dropFirst(3) {
            var attempts = 0
            while true {
                do {
                    try await sink.deliver(chunk)
                    break
                } catch let error as TributaryError where error.code == .sinkUnavailable && attempts < 3 {
                    attempts += 1
                }
            }
        }
        _ = try await sink.checkpoint(through: chunks.last!.last!.position)
        try await sink.close()
        #expect(try effect("lost") == effect("clean"), "the lost commits were applied again")
        #expect(try PostgresMirror.checkpoint(server, schema: "lost", pipeline: "suite") == PostgresMirror.checkpoint(server, schema: "clean", pipeline: "suite"))
    }

    @Test func readsItsSettingsFromThePipelineFile() throws {
        let text = "name: m\nsource: {store: s}\nsinks:\n  - type: postgres\n    password_env: PGPASS\n    schema: mirror\n    tables: {Post: posts}\n    create_tables: false\n    timeout: 5s\n"
        let pipeline = try PipelineFixtures.pipeline(text, environment: ["POSTGRES_URL": "postgres://app@db.example:6543/blog"])
        let settings = try #require(pipeline.sinks[0].configuration as? PostgresSinkSettings)
        #expect(settings == PostgresSinkSettings(endpoint: PostgresEndpoint(host: "db.example", port: 6543, user: "app", database: "blog"),
                                                 passwordEnvironment: "PGPASS", schema: "mirror", tables: ["Post": "posts"], createTables: false, timeout: 5))
        #expect(try PostgresEndpoint(parsing: "postgresql://me@localhost") == PostgresEndpoint(host: "localhost", port: 5432, user: "me", database: "me"))
        let shipped = try PipelineFile(contentsOf: PipelineFixtures.repositoryRoot.appendingPathComponent("pipelines/postgres-mirror.yml"),
                                       environment: ["POSTGRES_URL": "postgres://tributary@127.0.0.1:5432/postgres"], sinks: PipelineFixtures.sinks)
        #expect(shipped.source.snapshot)
        func failure(_ sink: String, _ environment: [String: String] = [:]) -> String {
            do {
                _ = try PipelineFixtures.pipeline("source: {store: s}\nsinks:\n  - type: postgres\n" + sink, environment: environment)
                return "no error"
            } catch { return "\(error)" }
        }
        #expect(failure("    url: mysql://a@b/c\n") == "test.yml:4: sinks[0].url: 'mysql://…@b/c' is not a postgres:// URL; write postgres://USER@HOST:PORT/DATABASE, such as postgres://tributary@127.0.0.1:5432/postgres")
        #expect(failure("    url: postgres://a:secret@b/c\n") == "test.yml:4: sinks[0].url: the postgres URL holds a password; remove it from the URL and name its source with password_env: NAME or password_file: PATH")
        #expect(!failure("    url: postgres://a:secret@b/c\n").contains("secret"))
        #expect(failure("    url: postgres://b:5432/c\n").contains("the postgres URL has no user"))
        #expect(failure("    password: x\n").contains("credentials are not written in a pipeline file"))
        #expect(failure("") == "test.yml:3: sinks[0].url: the environment variable POSTGRES_URL is not set; export POSTGRES_URL, or write ${POSTGRES_URL:-default}")
        #expect(failure("    create_tables: maybe\n", ["POSTGRES_URL": "postgres://a@b/c"]).contains("create_tables must be true or false"))
        #expect(failure("    password_env: A\n    password_file: B\n", ["POSTGRES_URL": "postgres://a@b/c"]).contains("give password_env or password_file, not both"))
        #expect(failure("    timeout: 0s\n", ["POSTGRES_URL": "postgres://a@b/c"]).contains("the timeout must be longer than 0"))
    }

    /// Five creates, the third refused by a CHECK constraint of an existing table.
    static func refusedBatch() -> [StreamRecord] {
        (1...5).map { key in
            StreamRecord(position: StreamPosition(token: 7, index: key - 1), storeID: SinkSuite.storeID, timestamp: Date(), author: nil, contextName: nil, operation: .create,
                         objectID: ObjectID(storeID: SinkSuite.storeID, entityName: "Post", primaryKey: Int64(key)),
                         properties: [PropertyChange(name: "title", after: .string(key == 3 ? "bad" : "good \(key)"))])
        }
    }

    @Test(arguments: [PipelineFile.OnError.deadLetter, .stop])
    func refusedRecordsFollowOnError(_ onError: PipelineFile.OnError) async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        _ = try PostgresMirror.query(server, "CREATE TABLE posts (\"_pk\" bigint PRIMARY KEY, title text CHECK (title <> 'bad'))")
        var settings = try Self.settings(server, schema: "public", createTables: false)
        settings.tables = ["Post": "posts"]
        let sink = PostgresSink(name: "pg", settings: settings, onError: onError)
        #expect(try await sink.open(SinkSuite.context) == nil)
        let records = Self.refusedBatch()
        do {
            try await sink.deliver(records)
            Issue.record("the batch was accepted")
        } catch let error as TributaryError {
            #expect(error.code == .sinkRejected)
            #expect(error.message.contains("refused record \(records[2].eventID)"), "\(error)")
            #expect(error.message.contains("23514"), "the SQLSTATE of a check violation: \(error)")
        }
        let rows = try PostgresMirror.query(server, "SELECT \"_pk\" FROM posts ORDER BY 1")
        let position = try PostgresMirror.checkpoint(server, pipeline: "suite")
        if onError == .deadLetter {
            #expect(rows == ["1", "2", "4", "5"], "the good records of the batch land")
            #expect(position == "7.4")
        } else {
            #expect(rows == ["1", "2"], "the records before the refused one land")
            #expect(position == "7.1")
        }
        // A new sink resumes after what landed; a table the sink cannot find is refused with a hint.
        let again = PostgresSink(name: "pg", settings: settings, onError: onError)
        #expect(try await again.open(SinkSuite.context)?.description == position)
        let other = StreamRecord(position: StreamPosition(token: 8, index: 0), storeID: SinkSuite.storeID, timestamp: Date(), author: nil, contextName: nil, operation: .create,
                                 objectID: ObjectID(storeID: SinkSuite.storeID, entityName: "Tag", primaryKey: 1), properties: [PropertyChange(name: "name", after: .string("x"))])
        await #expect(throws: TributaryError.self) { try await again.deliver([other]) }
        try await again.close()
        try await sink.close()
    }

    @Test func aSnapshotTakenAgainAfterACrashReplacesTheRowsOfTheInterruptedOne() async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        func snapshot(token: Int64, keys: [Int64]) -> [StreamRecord] {
            keys.enumerated().map { index, key in
                StreamRecord(position: StreamPosition(token: token, index: index, isSnapshot: true), storeID: SinkSuite.storeID, timestamp: Date(), author: nil, contextName: nil,
                             operation: .read, objectID: ObjectID(storeID: SinkSuite.storeID, entityName: "Post", primaryKey: key),
                             properties: [PropertyChange(name: "title", after: .string("at \(token)"))])
            }
        }
        let settings = try Self.settings(server, schema: "public")
        let first = PostgresSink(name: "pg", settings: settings)
        _ = try await first.open(SinkSuite.context)
        try await first.deliver(Array(snapshot(token: 5, keys: [1, 2, 3, 4]).prefix(3)))
        // The process dies before the snapshot ends; post 2 is deleted meanwhile, so the next snapshot is taken at a later token.
        let second = PostgresSink(name: "pg", settings: settings)
        #expect(try await second.open(SinkSuite.context)?.description == "5.r2")
        try await second.deliver(snapshot(token: 9, keys: [1, 3, 4]))
        try await second.close()
        #expect(try PostgresMirror.query(server, "SELECT \"_pk\", title FROM \"Post\" ORDER BY 1") == ["1|at 9", "3|at 9", "4|at 9"])
        // The same snapshot resumed (same token) keeps what it applied.
        let third = PostgresSink(name: "pg", settings: settings)
        #expect(try await third.open(SinkSuite.context)?.description == "9.r2")
        try await third.deliver(snapshot(token: 9, keys: [1, 3, 4, 5]))
        try await third.close()
        #expect(try PostgresMirror.query(server, "SELECT \"_pk\" FROM \"Post\" ORDER BY 1") == ["1", "3", "4", "5"])
    }

    @Test func renamedEntitiesGoToExistingTablesOfTheirName() async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        _ = try PostgresMirror.query(server, "CREATE TABLE articles (\"_pk\" bigint PRIMARY KEY, title text, content text)")
        let dir = TemporaryDirectory()
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        let ids = try PipelineFixtures.insertPosts(store, count: 20)
        try PipelineFixtures.editPosts(store, Array(ids.prefix(10)), round: 1)
        let text = "name: renamed\nsource: {store: s, entities: [Post]}\ntransforms:\n  - include: [title, content]\n  - rename: {Post: articles}\n"
            + "sinks:\n  - type: postgres\n    url: \(server.url)\n    create_tables: false\n    on_error: stop\n"
        let pipeline = try PipelineFixtures.pipeline(text)
        let runner = try PipelineRunner(pipeline: pipeline, coordinator: store, sinks: pipeline.sinks.map { PipelineRunner.makeSink($0) })
        while try await !runner.runOnce().caughtUp {}
        try await runner.finish()
        let expected = try PostgresMirror.storeRows(store, entities: ["Post"]).map { line in
            let fields = line.split(separator: "|", omittingEmptySubsequences: false)
            return "\(fields[1])|\(fields[2])|\(fields[3])"
        }
        #expect(try PostgresMirror.query(server, "SELECT \"_pk\", title, content FROM articles").sorted() == expected.sorted())
        #expect(expected.count == 18)
        #expect(try PostgresMirror.query(server, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'Post'") == ["0"], "no table was created")
    }

    /// A server that stops answering (SIGSTOP: its connections stay open) fails the delivery
    /// within the sink's timeout as `sinkUnavailable`, and the sink delivers on a new connection
    /// once it answers again. Without the deadline the await never returned (the time limit
    /// names the test; see the commit).
    @Test(.timeLimit(.minutes(2))) func aServerThatStopsAnsweringFailsTheDeliveryWithinTheTimeout() async throws {
        let server = try PostgresServer.start()
        defer { server.resume(); server.stop() }
        var settings = try Self.settings(server, schema: "public")
        settings.timeout = 2
        let sink = PostgresSink(name: "pg", settings: settings)
        _ = try await sink.open(SinkSuite.context)
        let records = Self.refusedBatch().filter { $0.objectID.primaryKey != 3 }
        try await sink.deliver(Array(records.prefix(2)))
        server.suspend()
        let started = Date()
        do {
            try await sink.deliver(Array(records.suffix(2)))
            Issue.record("a frozen server took the batch")
        } catch let error as TributaryError {
            #expect(error.code == .sinkUnavailable)
            #expect(error.message.contains("did not answer within 2.0 s"), "\(error)")
        }
        #expect(Date().timeIntervalSince(started) < 30, "failed within the timeout, not after the server came back")
        server.resume()
        try await sink.deliver(Array(records.suffix(2)))
        #expect(try await sink.checkpoint(through: records[3].position) == records[3].position)
        try await sink.close()
        #expect(try PostgresMirror.query(server, "SELECT \"_pk\" FROM \"Post\" ORDER BY 1") == ["1", "2", "4", "5"])
    }

    @Test func refusesAMirrorOfAnotherStore() async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        let sink = PostgresSink(name: "pg", settings: try Self.settings(server, schema: "public"))
        _ = try await sink.open(SinkSuite.context)
        _ = try await sink.checkpoint(through: StreamPosition(token: 3, index: 0))
        try await sink.close()
        let other = PostgresSink(name: "pg", settings: try Self.settings(server, schema: "public"))
        let context = SinkContext(pipeline: "suite", storeID: UUID(), model: SinkSuite.model)
        await #expect(throws: TributaryError.self) { _ = try await other.open(context) }
    }
}
