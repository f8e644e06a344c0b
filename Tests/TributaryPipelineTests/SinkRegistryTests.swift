import Foundation
import Synchronization
import Testing
import Tributary
import TributaryPipeline
import TributaryStreams

/// Sink types come from a registry: a file naming a type that is not registered fails with one
/// line listing those that are, and a sink declared outside the pipeline module reads its own
/// settings (errors with file, line and key) once registered in one line.
@Suite struct SinkRegistryTests {
    /// A sink declared here as a sink module would: it counts the records it is given.
    struct CountingSinkSettings: SinkConfiguration {
        static let type = "counting"
        static let keys = ["limit"]
        static let counted = Mutex(0)
        var limit: Int

        init(settings: PipelineSettingsNode) throws {
            let node = try settings.required("limit", hint: "add limit: 10")
            limit = try node.positive()
            guard limit <= 1_000 else { throw node.fail("the limit \(limit) is above 1000", hint: "write limit: 1000 or less") }
        }

        func makeSink(_ sink: PipelineFile.SinkSettings, environment: [String: String]) -> any Sink { CountingSink(name: sink.name) }
    }

    final class CountingSink: Sink {
        let name: String
        init(name: String) { self.name = name }
        func open(_ context: SinkContext) async throws -> StreamPosition? { nil }
        func deliver(_ records: [StreamRecord]) async throws { CountingSinkSettings.counted.withLock { $0 += records.count } }
        func checkpoint(through position: StreamPosition) async throws -> StreamPosition? { position }
        func close() async throws {}
    }

    static func error(_ yaml: String, sinks: SinkRegistry) -> TributaryError? {
        do {
            _ = try PipelineFile(yaml: yaml, path: "test.yml", environment: [:], sinks: sinks)
            return nil
        } catch {
            return error as? TributaryError
        }
    }

    @Test func anUnknownTypeListsTheRegisteredTypesWithFileAndLine() throws {
        let yaml = "source: {store: s}\nsinks:\n  - type: stdout\n  - type: http\n    url: https://example.com/hook\n"
        // A library user who links no sink module: http is not registered.
        let standard = try #require(Self.error(yaml, sinks: .standard))
        #expect(standard.code == .invalidPipeline)
        #expect(standard.description == "test.yml:4: sinks[1].type: unknown sink type 'http'; the sink types registered are fts, segments, stdout")
        #expect(SinkRegistry.standard.types == ["fts", "segments", "stdout"])
        // With every sink module registered it reads.
        #expect(try PipelineFixtures.pipeline(yaml).sinks.map(\.type) == ["stdout", "http"])
        #expect(PipelineFixtures.sinks.types == ["fts", "http", "nats", "postgres", "redis", "segments", "stdout"])
        let kafka = try #require(Self.error("source: {store: s}\nsinks:\n  - type: kafka\n", sinks: PipelineFixtures.sinks))
        #expect(kafka.description == "test.yml:3: sinks[0].type: unknown sink type 'kafka'; the sink types registered are fts, http, nats, postgres, redis, segments, stdout")
    }

    @Test func aRegisteredSinkReadsItsOwnSettingsAndRuns() async throws {
        var sinks = SinkRegistry.standard
        sinks.register(CountingSinkSettings.self)
        let base = "source: {store: s}\nsinks:\n  - type: counting\n"
        #expect(Self.error(base, sinks: sinks)?.description == "test.yml:3: sinks[0].limit: a counting sink needs limit; add limit: 10")
        #expect(Self.error(base + "    limit: 5000\n", sinks: sinks)?.description == "test.yml:4: sinks[0].limit: the limit 5000 is above 1000; write limit: 1000 or less")
        #expect(Self.error(base + "    limit: ${LIMIT}\n", sinks: sinks)?.description
                == "test.yml:4: sinks[0].limit: the environment variable LIMIT is not set; export LIMIT, or write ${LIMIT:-default}")
        #expect(Self.error(base + "    limit: 5\n    colour: red\n", sinks: sinks)?.description
                == "test.yml:5: sinks[0].colour: unknown key 'colour'; allowed keys: type, name, on_error, dead_letter, batch_size, limit")

        let dir = TemporaryDirectory()
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        try PipelineFixtures.insertPosts(store, count: 25)
        let pipeline = try PipelineFile(yaml: base + "    limit: ${LIMIT:-7}\n", path: "test.yml", environment: [:], sinks: sinks)
        #expect((pipeline.sinks[0].configuration as? CountingSinkSettings)?.limit == 7)
        let runner = try PipelineRunner(pipeline: pipeline, coordinator: store, sinks: pipeline.sinks.map { PipelineRunner.makeSink($0) })
        while try await !runner.runOnce().caughtUp {}
        try await runner.finish()
        #expect(CountingSinkSettings.counted.withLock { $0 } == 25)
    }
}
