import Foundation
import Testing
import Tributary
import TributaryPipeline
import TributaryStreams
import TributaryTestSupport

/// The segments sink writes schema records in their place (issue 23): the directory it
/// writes verifies with the model versions listed, and replays to the source's rows and model.
@Suite struct SegmentsSchemaTests {
    @Test func aSegmentsSinkWritesSchemaRecordsThatVerifyAndReplay() async throws {
        let dir = TemporaryDirectory()
        let url = dir.url.appendingPathComponent("s.sqlite")
        let store = try PipelineFixtures.store(at: url)
        try PipelineFixtures.insertPosts(store, count: 20)
        let original = try #require(store.managedObjectModel)
        store.persistentStores.forEach(store.remove)
        let description = PersistentStoreDescription(url: url)
        description.persistentHistoryTracking = true
        let grown = PersistentStoreCoordinator(managedObjectModel: try NATSSchemaTests.grownModel())
        try grown.addPersistentStore(with: description)
        var views = BatchUpdateRequest(entityName: "Post", propertiesToUpdate: ["views": .integer(5)])
        views.predicate = try StorePredicate(format: "externalID == %@", "ext-3")
        try grown.execute(views)

        let stream = dir.url.appendingPathComponent("archive")
        let sink = SegmentsSink(name: "archive", directory: stream, format: .native)
        // The sink is opened with the model the history starts with, as model.json should hold.
        _ = try await sink.open(SinkContext(pipeline: "archive", storeID: grown.persistentStores[0].identifier, model: original))
        try await NATSSchemaTests.deliverHistory(of: grown, after: nil, to: sink)

        let summary = try StreamVerifier(directory: stream).verify()
        #expect(summary.schemaRecords == 1)
        let manifest = try #require(try StreamManifest.load(from: stream))
        #expect(manifest.models?.map(\.version) == [original.versionHash, try #require(grown.managedObjectModel).versionHash])
        let replayer = try StreamReplayer(directory: stream)
        let copy = try replayer.openTarget(at: dir.url.appendingPathComponent("copy.sqlite"))
        _ = try replayer.replay(into: copy)
        #expect(try NATSReplicatorTests.dump(copy) == NATSReplicatorTests.dump(grown))
        #expect(copy.managedObjectModel == grown.managedObjectModel)
    }
}
