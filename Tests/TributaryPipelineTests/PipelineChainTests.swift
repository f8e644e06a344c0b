import Foundation
import Synchronization
import Testing
import Tributary
import TributaryPipeline
import TributaryStreams

/// A transaction's chain hash rides on the record that completes it in a pipeline's delivery
/// (`StreamRecord.chainHash`), and on no other: not on a record whose transaction the next
/// read continues, nor on one whose transaction has later records the transforms kept.
@Suite struct PipelineChainTests {
    /// Keeps every record delivered.
    final class CollectingSink: Sink {
        let name = "collect"
        var records: [StreamRecord] = []
        func open(_ context: SinkContext) async throws -> StreamPosition? { records.last?.position }
        func deliver(_ records: [StreamRecord]) async throws { self.records += records }
        func checkpoint(through position: StreamPosition) async throws -> StreamPosition? { max(position, records.last?.position ?? position) }
        func close() async throws {}
    }

    /// Runs a pipeline reading at most 5 records a step (transactions hold 7) with `transforms`
    /// over a store of 30 posts, to the end; returns the store and what the sink got.
    func delivered(transforms: String = "") async throws -> (PersistentStoreCoordinator, [StreamRecord], TemporaryDirectory) {
        let dir = TemporaryDirectory()
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        try PipelineFixtures.insertPosts(store, count: 30, perTransaction: 7)
        let pipeline = try PipelineFixtures.pipeline("source: {store: s}\n\(transforms)sinks: [{type: stdout, batch_size: 3}]\ncheckpoint: {records: 5, seconds: 1h}\n")
        let sink = CollectingSink()
        let runner = try PipelineRunner(pipeline: pipeline, coordinator: store, sinks: [sink])
        while try await !runner.runOnce().caughtUp {}
        try await runner.finish()
        return (store, sink.records, dir)
    }

    /// Expects exactly the last of `records` of each token to carry that transaction's chain hash.
    func expectHashesOnTransactionEnds(_ records: [StreamRecord], _ store: PersistentStoreCoordinator, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let lastOfToken = Dictionary(records.map { ($0.position.token, $0.position) }, uniquingKeysWith: max)
        for record in records {
            let expected = lastOfToken[record.position.token] == record.position ? try store.historyChainHash(at: record.position.token) : nil
            #expect(record.chainHash == expected, "record \(record.position)", sourceLocation: sourceLocation)
        }
        #expect(records.filter { $0.chainHash != nil }.count == lastOfToken.count, sourceLocation: sourceLocation)
    }

    @Test func eachTransactionsLastRecordCarriesItsChainHashAcrossReads() async throws {
        let (store, records, _) = try await delivered()
        #expect(records.count == 30)
        #expect(Set(records.map(\.position.token)) == [1, 2, 3, 4, 5])
        try expectHashesOnTransactionEnds(records, store)
        #expect(try store.historyChainHash(at: 5)?.count == 32)
    }

    @Test func theLastRecordTheTransformsKeepCarriesTheHash() async throws {
        // Even-numbered posts are about swift: each transaction's last record kept is not its last change.
        let (store, records, _) = try await delivered(transforms: "transforms:\n  - filter: \"title CONTAINS[c] 'swift'\"\n")
        #expect(records.count == 15)
        #expect(records.contains { $0.position == StreamPosition(token: 1, index: 6) })
        #expect(!records.contains { $0.position == StreamPosition(token: 2, index: 6) }, "post 13 is about linux")
        try expectHashesOnTransactionEnds(records, store)
    }
}
