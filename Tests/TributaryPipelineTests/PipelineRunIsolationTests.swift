import Foundation
import Testing
import Tributary
import TributaryPipeline
import TributaryStreams
import TributaryTestSupport

/// Pipelines run together (`tributary run a.yml b.yml`) do not lose each other's history and
/// do not wait on each other's sinks; `--once` always returns (issue 18).
@Suite struct PipelineRunIsolationTests {
    static func shipped(_ name: String) -> String {
        PipelineFixtures.repositoryRoot.appendingPathComponent("pipelines/\(name)").path
    }

    /// The number of posts the search index at `path` holds.
    static func indexedPosts(_ path: String) throws -> Int {
        let hits = try TributaryProcess.run(["search", path, "Body", "--limit", "100000", "--json"])
        #expect(hits.status == 0, "\(hits.stderr)")
        return hits.stdoutLines.count
    }

    static func consumerToken(_ store: PersistentStoreCoordinator, _ name: String) throws -> Int64 {
        try store.historyConsumer(named: name).token.value
    }

    @Test func aPipelineThatPrunesDoesNotDeleteWhatAnotherOfTheRunHasToRead() throws {
        let dir = TemporaryDirectory()
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        try PipelineFixtures.insertPosts(store, count: 40)
        let environment = ["TRIBUTARY_STORE": dir.path("s.sqlite"), "TRIBUTARY_OUT": dir.path("out")]
        let run = try TributaryProcess.run(["run", Self.shipped("audit-archive.yml"), Self.shipped("search-index.yml"), "--once"], environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try Self.indexedPosts(dir.path("out/search.sqlite")) == 40)
        let current = try store.currentPersistentHistoryToken().value
        #expect(try Self.consumerToken(store, "audit-archive") == current && Self.consumerToken(store, "search-index") == current)

        // A consumer that is new once history was pruned is told so.
        let late = """
            name: late
            source:
              store: \(dir.path("s.sqlite"))
              consumer: late
            sinks:
              - type: segments
                directory: \(dir.path("late"))
            """
        try Data(late.utf8).write(to: dir.url.appendingPathComponent("late.yml"))
        let warned = try TributaryProcess.run(["run", dir.path("late.yml"), "--once"])
        #expect(warned.status == 0, "\(warned.stderr)")
        #expect(warned.stderr.contains("consumer late is new and history through token \(current) was already pruned"), "\(warned.stderr)")
    }

    @Test func aDeeplyNestedFilterIsOneLine() throws {
        let dir = TemporaryDirectory()
        _ = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        let filter = String(repeating: "NOT ", count: 5_000) + "title == 'x'"
        let yaml = "name: deep\nsource: {store: \(dir.path("s.sqlite"))}\ntransforms:\n  - filter: \"\(filter)\"\nsinks: [{type: stdout}]\n"
        try Data(yaml.utf8).write(to: dir.url.appendingPathComponent("deep.yml"))
        let run = try TributaryProcess.run(["run", dir.path("deep.yml"), "--once"])
        #expect(run.status != 0)
        #expect(run.stderrLines.count == 1 && run.stderr.contains("deep.yml:4: transforms[0].filter") && run.stderr.contains("nested more than 100 levels"), "\(run.stderr)")
    }

    @Test func aSinkThatIsAwayDelaysOnlyItsPipelineAndOnceGivesUp() throws {
        let dir = TemporaryDirectory()
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        try PipelineFixtures.insertPosts(store, count: 40)
        // No NATS server listens on this port: the nats pipeline retries its open, unlimited.
        let refusing = try FreePort.refusing()
        defer { withExtendedLifetime(refusing) {} }
        let port = refusing.port
        let environment = ["TRIBUTARY_STORE": dir.path("s.sqlite"), "TRIBUTARY_OUT": dir.path("out"), "NATS_URL": "nats://127.0.0.1:\(port)"]
        let started = Date()
        let run = try TributaryProcess.run(["run", Self.shipped("nats-fanout.yml"), Self.shipped("search-index.yml"), "--once", "--give-up-after", "2s"], environment: environment)
        let elapsed = Date().timeIntervalSince(started)
        #expect(run.status != 0)
        #expect(run.stderr.contains("sink nats was unavailable for 2 s") && run.stderr.contains("giving up"), "\(run.stderr)")
        #expect(elapsed < 30, "the run returned after \(elapsed) s")
        // The other pipeline delivered everything; the failing one's consumer did not move.
        #expect(try Self.indexedPosts(dir.path("out/search.sqlite")) == 40)
        #expect(try Self.consumerToken(store, "search-index") == store.currentPersistentHistoryToken().value)
        #expect(try Self.consumerToken(store, "nats-fanout") == 0)
    }
}

/// A sink that takes `delay` to deliver each batch and keeps nothing.
private final class SlowSink: Sink {
    let name = "slow"
    let delay: Duration
    init(delay: Duration) { self.delay = delay }
    func open(_ context: SinkContext) async throws -> StreamPosition? { nil }
    func deliver(_ records: [StreamRecord]) async throws { try await Task.sleep(for: delay) }
    func checkpoint(through position: StreamPosition) async throws -> StreamPosition? { position }
    func close() async throws {}
}

extension PipelineRunIsolationTests {
    /// A pipeline that prunes and finishes first prunes only what the other had consumed by
    /// then; the service prunes again once both have finished, so nothing consumed is kept.
    @Test func historyConsumedByEveryPipelineOfARunIsPrunedWhenTheRunEnds() async throws {
        let dir = TemporaryDirectory()
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        try PipelineFixtures.insertPosts(store, count: 30, perTransaction: 10)
        let fast = try PipelineFixtures.pipeline("name: fast\nsource: {store: s, consumer: fast}\nsinks: [{type: segments, directory: \(dir.path("fast"))}]\nprune: {consumed: true}\n")
        let slow = try PipelineFixtures.pipeline("name: slow\nsource: {store: s, consumer: slow}\nsinks: [{type: stdout}]\ncheckpoint: {records: 10}\n")
        let runners = [try PipelineRunner(pipeline: fast, coordinator: store, sinks: fast.sinks.map { PipelineRunner.makeSink($0) }),
                       try PipelineRunner(pipeline: slow, coordinator: store, sinks: [SlowSink(delay: .milliseconds(300))])]
        try await PipelineService(runners: runners, stop: StopSignal(), once: true).run(once: true)
        let current = try store.currentPersistentHistoryToken()
        #expect(try store.historyConsumer(named: "slow").token == current && store.historyConsumer(named: "fast").token == current)
        #expect(try store.historySize().transactions == 0, "every transaction was consumed by both")
    }
}
