import Foundation
import Testing
import Tributary
import TributaryPipeline
import TributaryStreams
import TributaryTestSupport
import TributaryNATSSink

/// Model changes on NATS (issue 23): the stream starts with the source's model, so a new
/// replica needs no `--model`; a schema message mid-stream migrates the replica, which ends
/// equal to the source, rows and model.
@Suite(.serialized, .timeLimit(.minutes(10)), .tags(.servers)) struct NATSSchemaTests {
    /// The blog model with `Post.views` (integer, default 0) added.
    static func grownModel() throws -> ManagedObjectModel {
        var entities = try ManagedObjectModel(yamlFile: PipelineFixtures.repositoryRoot.appendingPathComponent("examples/blog/model.yml")).entities
        let post = try #require(entities.firstIndex { $0.name == "Post" })
        entities[post].attributes.append(AttributeDescription(name: "views", type: .integer, defaultValue: .integer(0)))
        return try ManagedObjectModel(entities: entities)
    }

    /// The rows and model of the store at `path`, opened with its own model and closed again.
    static func state(_ path: String) throws -> (rows: [String], model: ManagedObjectModel?) {
        let coordinator = PersistentStoreCoordinator()
        try coordinator.addPersistentStore(with: PersistentStoreDescription(url: URL(fileURLWithPath: path)))
        defer { coordinator.persistentStores.forEach(coordinator.remove) }
        return (try NATSReplicatorTests.dump(coordinator), coordinator.managedObjectModel)
    }

    /// Delivers the history after `after` to `sink` as the pipeline runner does: changes with
    /// `deliver(_:)`, schema transactions in their place with `deliverSchema(_:)`.
    static func deliverHistory(of store: PersistentStoreCoordinator, after: PersistentHistoryToken?, to sink: any Sink) async throws {
        enum Item { case change(StreamRecord), schema(SchemaRecord) }
        let storeID = store.persistentStores[0].identifier
        var items: [Item] = []
        try store.enumerateHistoryChanges(.fetchHistory(after: after), schema: { items.append(.schema(SchemaRecord($0, storeID: storeID))) }) { view in
            items.append(.change(try StreamRecord(view)))
        }
        var batch: [StreamRecord] = []
        var last: StreamPosition?
        for item in items {
            switch item {
            case .change(let record):
                batch.append(record)
                last = record.position
            case .schema(let record):
                if !batch.isEmpty { try await sink.deliver(batch) }
                batch = []
                try await sink.deliverSchema(record)
                last = record.position
            }
        }
        if !batch.isEmpty { try await sink.deliver(batch) }
        if let last { _ = try await sink.checkpoint(through: last) }
        try await sink.close()
    }

    @Test func aNewReplicaNeedsNoModelAndFollowsAnAdditiveModelChange() async throws {
        let dir = TemporaryDirectory()
        let server = try NATSServer.start()
        defer { server.stop() }
        let url = dir.url.appendingPathComponent("s.sqlite")
        let store = try PipelineFixtures.store(at: url)
        let ids = try PipelineFixtures.insertPosts(store, count: 40)
        try PipelineFixtures.editPosts(store, Array(ids.prefix(10)), round: 0)
        let pipeline = PipelineFixtures.repositoryRoot.appendingPathComponent("pipelines/nats-fanout.yml").path
        let published = try TributaryProcess.run(["run", pipeline, "--once"], environment: ["TRIBUTARY_STORE": dir.path("s.sqlite"), "NATS_URL": server.url, "NATS_STREAM": "SCHEMA"])
        #expect(published.status == 0, "\(published.stderr)")
        let source = "\(server.url)/SCHEMA"

        // No --model: the replica is made with the model the stream starts with.
        let first = try TributaryProcess.run(["replay", source, "--into", dir.path("replica.sqlite")])
        #expect(first.status == 0, "\(first.stderr)")
        let original = try #require(store.managedObjectModel)
        let copied = try Self.state(dir.path("replica.sqlite"))
        #expect(copied.rows == (try NATSReplicatorTests.dump(store)) && copied.model == original)

        // The source grows a model (reopened with Post.views), and uses the new attribute.
        let before = try store.currentPersistentHistoryToken()
        store.persistentStores.forEach(store.remove)
        let description = PersistentStoreDescription(url: url)
        description.persistentHistoryTracking = true
        let grown = PersistentStoreCoordinator(managedObjectModel: try Self.grownModel())
        try grown.addPersistentStore(with: description)
        try PipelineFixtures.insertPosts(grown, count: 5, from: 1_000)
        var views = BatchUpdateRequest(entityName: "Post", propertiesToUpdate: ["views": .integer(9)])
        views.predicate = try StorePredicate(format: "externalID == %@", "ext-30")
        try grown.execute(views)
        let settings = NATSSinkSettings(url: server.url, stream: "SCHEMA", subject: "tributary.{store}.{entity}.{op}", duplicateWindow: 120)
        let sink = NATSSink(name: "nats", settings: settings)
        _ = try await sink.open(SinkContext(pipeline: "nats-fanout", storeID: grown.persistentStores[0].identifier, model: try #require(grown.managedObjectModel)))
        try await Self.deliverHistory(of: grown, after: before, to: sink)

        // The replica applies the schema message, migrating, then the changes that use views.
        let followed = try TributaryProcess.run(["replay", source, "--into", dir.path("replica.sqlite")])
        #expect(followed.status == 0, "\(followed.stderr)")
        let expected = try NATSReplicatorTests.dump(grown)
        #expect(expected.contains { $0.contains("views=9") || $0.contains("views=integer(9)") }, "\(expected.prefix(3))")
        let after = try Self.state(dir.path("replica.sqlite"))
        #expect(after.rows == expected)
        #expect(after.model == grown.managedObjectModel && after.model?.entity(named: "Post")?.attribute(named: "views") != nil)

        // A replica made now, still without --model, goes through both models and ends the same.
        let late = try TributaryProcess.run(["replay", source, "--into", dir.path("late.sqlite")])
        #expect(late.status == 0, "\(late.stderr)")
        let lateState = try Self.state(dir.path("late.sqlite"))
        #expect(lateState.rows == expected && lateState.model == grown.managedObjectModel)
    }
}
