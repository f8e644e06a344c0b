import Foundation
import Testing
import Tributary
import TributaryHTTPSink
import TributaryPipeline
import TributaryRedisSink
import TributaryStreams

/// What the HTTP and Redis sinks do with a schema record (issue 23): HTTP posts it as a
/// batch of one, keyed by its event ID; Redis counts and ignores it.
@Suite struct SinkSchemaTests {
    static func record() throws -> SchemaRecord {
        let model = try ManagedObjectModel { Entity("Item") { Attribute("name", .string); Attribute("price", .double) } }
        let change = SchemaChange(fromVersion: "0000000000000001", toVersion: model.versionHash, changes: ["added Item.price"], model: model, isDetected: false)
        return SchemaRecord(position: StreamPosition(token: 7, index: 0), storeID: UUID(), timestamp: Date(), change: change)
    }

    @Test func theHTTPSinkPostsASchemaRecordAsABatchOfOne() async throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        let sink = HTTPSink(name: "http", url: URL(string: server.url)!)
        let record = try Self.record()
        _ = try await sink.open(SinkContext(pipeline: "p", storeID: record.storeID, model: record.change.model))
        try await sink.deliverSchema(record)
        let state = server.state.withLock { $0 }
        #expect(state.recordIDs == [record.eventID])
        #expect(state.keys[record.eventID] == 1, "keyed by its event ID")
    }

    @Test func theRedisSinkCountsAndIgnoresSchemaRecords() async throws {
        let sink = RedisSink(name: "redis", settings: RedisSinkSettings(url: URL(string: "redis://127.0.0.1:1")!))
        try await sink.deliverSchema(try Self.record())
        #expect(sink.ignoredSchemaRecords == 1)
    }
}
