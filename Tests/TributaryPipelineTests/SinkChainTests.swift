import Foundation
import Testing
import Tributary
import TributaryNATSSink
import TributaryPipeline
import TributaryPostgresSink
import TributaryStreams
import TributaryTestSupport

/// The chain hash of the newest transaction a sink holds whole, as the NATS sink publishes it
/// (`Tributary-Chain` on the message of each transaction's last record) and the PostgreSQL
/// sink keeps it (`chain_token`, `chain_hash` in `tributary_checkpoints`, an older table
/// upgraded): always the store's own hash of that transaction (`historyChainHash(at:)`).
@Suite(.serialized, .timeLimit(.minutes(10)), .tags(.servers)) struct SinkChainTests {
    /// A store of 30 posts in transactions of 7 (tokens 1…5) in `dir`.
    static func store(in dir: TemporaryDirectory) throws -> PersistentStoreCoordinator {
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        try PipelineFixtures.insertPosts(store, count: 30, perTransaction: 7)
        return store
    }

    /// `TOKEN:HASH` as the store holds it.
    static func point(_ store: PersistentStoreCoordinator, _ token: Int64) throws -> String {
        "\(token):\(Hex.string(try #require(try store.historyChainHash(at: token))))"
    }

    @Test func theNATSSinkPublishesEachTransactionsChainHashOnItsLastMessage() async throws {
        let server = try NATSServer.start()
        defer { server.stop() }
        let dir = TemporaryDirectory()
        let store = try Self.store(in: dir)
        let pipeline = try PipelineFixtures.pipeline("name: chained\nsource: {store: s}\nsinks:\n  - type: nats\n    url: \(server.url)\n    stream: CHAIN\n    batch_size: 3\n"
                                                     + "checkpoint: {records: 5, seconds: 1h}\n")
        try await PostgresMirror.runToCatchUp(pipeline, store)
        let messages = try NATSSinkTests.messages(server.url, stream: "CHAIN")
        #expect(messages.count == 30)
        let positions = try messages.map { try StreamPosition(parsing: $0.headers[NATSSink.positionHeader] ?? "") }
        let lastOfToken = Dictionary(positions.map { ($0.token, $0) }, uniquingKeysWith: max)
        for (message, position) in zip(messages, positions) {
            let expected = lastOfToken[position.token] == position ? try Self.point(store, position.token) : nil
            #expect(message.headers[NATSSink.chainHeader] == expected, "message of \(position)")
        }
        let newest = try #require(try NATSChainPoint.newest(url: server.url, stream: "CHAIN", storeID: store.persistentStores[0].identifier, pipeline: nil))
        #expect("\(newest.token):\(newest.hash)" == (try Self.point(store, 5)) && newest.pipeline == "chained")
        #expect(try NATSChainPoint.newest(url: server.url, stream: "CHAIN", storeID: UUID(), pipeline: nil) == nil, "another store's")
        #expect(try NATSChainPoint.newest(url: server.url, stream: "CHAIN", storeID: store.persistentStores[0].identifier, pipeline: "other") == nil)
    }

    @Test func thePostgresCheckpointHoldsTheHashOfTheNewestTransactionMirroredWhole() async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        let dir = TemporaryDirectory()
        let store = try Self.store(in: dir)
        // A checkpoint table as sinks made it before the chain columns: upgraded on connect.
        _ = try PostgresMirror.query(server, "CREATE SCHEMA old; " + PostgresMirrorSchema(model: store.persistentStores[0].model, schema: "old").checkpointTableStatement()
            .replacingOccurrences(of: ", chain_token bigint, chain_hash text", with: ""))
        let pipeline = try PipelineFixtures.pipeline("name: chained\nsource: {store: s}\nsinks:\n  - type: postgres\n    url: \(server.url)\n    schema: old\n    batch_size: 3\n"
                                                     + "checkpoint: {records: 5, seconds: 1h}\n")
        let runner = try PipelineRunner(pipeline: pipeline, coordinator: store, sinks: pipeline.sinks.map { PipelineRunner.makeSink($0) })
        func chain() throws -> String? {
            try PostgresMirror.query(server, "SELECT chain_token || ':' || chain_hash FROM old.tributary_checkpoints WHERE pipeline = 'chained'").first
        }
        try await runner.runOnce()   // 1.0…1.4: transaction 1 not whole yet
        #expect(try PostgresMirror.checkpoint(server, schema: "old", pipeline: "chained") == "1.4")
        #expect(try chain() == "∅")
        try await runner.runOnce()   // 1.5…2.2
        #expect(try chain() == Self.point(store, 1))
        while try await !runner.runOnce().caughtUp {}
        try await runner.finish()
        #expect(try chain() == Self.point(store, 5))
        let rows = try await PostgresChainCheckpoint.read(endpoint: try PostgresEndpoint(parsing: server.url), password: nil, schema: "old",
                                                          storeID: store.persistentStores[0].identifier, pipeline: nil)
        #expect(rows.map { "\($0.pipeline) \($0.token ?? -1):\($0.hash ?? "")" } == ["chained " + (try Self.point(store, 5))])
    }
}
