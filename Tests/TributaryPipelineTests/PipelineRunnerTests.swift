import Foundation
import TributaryTestSupport
import Synchronization
import Testing
import Tributary
import TributaryPipeline
import TributaryStreams

/// The runner's steps against a real store: delivery, checkpoints, retries, dead letters,
/// stop, pruning and snapshots.
@Suite struct PipelineRunnerTests {
    /// Records what the runner reported and how long it would have slept.
    final class Recorder: Sendable {
        let lines = Mutex<[String]>([])
        let sleeps = Mutex<[TimeInterval]>([])
    }

    func runner(_ yaml: String, store: PersistentStoreCoordinator, environment: [String: String] = [:], recorder: Recorder) throws -> PipelineRunner {
        let pipeline = try PipelineFixtures.pipeline(yaml, environment: environment)
        let runner = try PipelineRunner(pipeline: pipeline, coordinator: store, sinks: pipeline.sinks.map { PipelineRunner.makeSink($0, environment: environment) })
        runner.events = { event in   // what the service would log
            switch event {
            case .delivered, .recovered: return
            default: recorder.lines.withLock { $0.append(event.description) }
            }
        }
        runner.sleep = { seconds in recorder.sleeps.withLock { $0.append(seconds) } }
        runner.random = { 1 }
        return runner
    }

    func drain(_ runner: PipelineRunner) async throws {
        while try await !runner.runOnce().caughtUp {}
        try await runner.finish()
    }

    @Test func deliversEverythingAndCommitsTheConsumerInCheckpoints() async throws {
        let dir = TemporaryDirectory()
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        let ids = try PipelineFixtures.insertPosts(store, count: 45)
        try PipelineFixtures.editPosts(store, Array(ids.prefix(10)), round: 1)
        let yaml = """
            source: {store: s}
            transforms:
              - filter: "title CONTAINS[c] 'swift'"
            sinks:
              - type: fts
                path: \(dir.path("index.sqlite"))
                entities: {Post: [title, content]}
            checkpoint: {records: 20, seconds: 1h}
            prune: {consumed: true}
            """
        let recorder = Recorder()
        let runner = try self.runner(yaml, store: store, recorder: recorder)
        let first = try await runner.runOnce()
        #expect(first.read == 20 && !first.caughtUp && first.checkpointed)
        let consumer = try store.historyConsumer(named: "test")
        let current = try store.currentPersistentHistoryToken().value
        #expect(consumer.token.value >= 1 && consumer.token.value < current, "committed part of the way")
        try await drain(runner)
        #expect(try store.historyConsumer(named: "test").token == store.currentPersistentHistoryToken())
        #expect(try store.historySize().transactions == 0, "consumed history is pruned")
        let documents = try FullTextIndex(path: dir.path("index.sqlite"), create: false).documents()
        // Even-numbered posts are about swift; ten edited to "Edited 1 swift", two of those deleted.
        #expect(documents.count == 23 + 5 - 2)
        #expect(recorder.lines.withLock { $0.isEmpty })
        // A second runner finds nothing to do.
        let again = try self.runner(yaml, store: store, recorder: recorder)
        let step = try await again.runOnce()
        #expect(step.read == 0 && step.caughtUp)
    }

    /// The next step's history is read while a step is delivered: commits made after that
    /// read began must still count, or a step would report caught up with them undelivered.
    @Test func commitsAfterTheReadAheadAreNotReportedCaughtUp() async throws {
        let dir = TemporaryDirectory()
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        _ = try PipelineFixtures.insertPosts(store, count: 15, perTransaction: 1)
        let yaml = """
            source: {store: s}
            sinks:
              - type: fts
                path: \(dir.path("index.sqlite"))
                entities: {Post: [title]}
            checkpoint: {records: 10, seconds: 1h}
            """
        let recorder = Recorder()
        let runner = try self.runner(yaml, store: store, recorder: recorder)
        let first = try await runner.runOnce()
        #expect(first.read == 10 && !first.caughtUp)
        // The read ahead of the last five has (almost surely) ended; then three more commit.
        try await Task.sleep(for: .milliseconds(200))
        _ = try PipelineFixtures.insertPosts(store, count: 3, from: 15, perTransaction: 1)
        let second = try await runner.runOnce()
        #expect(second.read == 5)
        #expect(!second.caughtUp, "three commits came after the read ahead")
        try await drain(runner)
        #expect(try store.historyConsumer(named: "test").token == store.currentPersistentHistoryToken())
        #expect(try FullTextIndex(path: dir.path("index.sqlite"), create: false).documents().count == 18)
    }

    @Test func unavailableEndpointIsRetriedWithBackoffAndCaughtUp() async throws {
        let dir = TemporaryDirectory()
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        try PipelineFixtures.insertPosts(store, count: 30)
        let server = try TestHTTPServer()
        defer { server.stop() }
        server.state.withLock { $0.unavailableLeft = 6 }
        let recorder = Recorder()
        let runner = try self.runner("""
            source: {store: s}
            sinks:
              - type: http
                url: \(server.url)
                batch_size: 7
                on_error: stop
            retry: {initial: 100ms, max: 1s}
            """, store: store, recorder: recorder)
        let events = Mutex<[String]>([])
        runner.events = { event in
            let text: String
            switch event {
            case .delivered(let sink, let records): text = "delivered \(records) to \(sink)"
            case .failed(let failure): text = "failed \(failure.attempt): \(failure.sink): \(failure.error.message)"
            case .recovered: text = "recovered"
            default: text = event.description
            }
            events.withLock { $0.append(text) }
            if case .failed = event { recorder.lines.withLock { $0.append(event.description) } }
        }
        try store.registerHistoryConsumer("test", startingAt: .oldest)
        #expect(try store.historySize(after: store.historyConsumer(named: "test").token).changes == 30)
        try await drain(runner)
        #expect(try store.historySize(after: store.historyConsumer(named: "test").token).changes == 0)
        let state = server.state.withLock { $0 }
        #expect(state.recordIDs.count == 30 && Set(state.recordIDs).count == 30)
        #expect(recorder.sleeps.withLock { $0 } == [0.1, 0.2, 0.4, 0.8, 1, 1], "capped exponential backoff")
        let lines = recorder.lines.withLock { $0 }
        #expect(lines.count == 6 && lines.allSatisfy { $0.contains("HTTP 503") }, "each failure is reported")
        // The same as values: six failures of the first batch, a recovery, then every batch delivered.
        let reported = events.withLock { $0 }
        #expect(reported.prefix(6).enumerated().allSatisfy { $1.hasPrefix("failed \($0 + 1): http: ") && $1.contains("HTTP 503") }, "\(reported)")
        #expect(reported.dropFirst(6).first == "recovered", "\(reported)")
        #expect(reported.dropFirst(7) == ["delivered 7 to http", "delivered 7 to http", "delivered 7 to http", "delivered 7 to http", "delivered 2 to http"], "\(reported)")
    }

    /// A stop after a step that read whole transactions commits the consumer through them:
    /// its position is what was delivered, not a transaction behind (the step ended at the
    /// limit, where the next change read belongs to the next transaction).
    @Test func aStopCommitsTheConsumerThroughTheLastTransactionDeliveredWhole() async throws {
        let dir = TemporaryDirectory()
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        let before = try store.currentPersistentHistoryToken().value
        try PipelineFixtures.insertPosts(store, count: 30, perTransaction: 10)
        let yaml = "source: {store: s}\nsinks: [{type: fts, path: \(dir.path("index.sqlite")), entities: {Post: [title]}}]\ncheckpoint: {records: 10, seconds: 1h}\n"
        let runner = try self.runner(yaml, store: store, recorder: Recorder())
        let first = try await runner.runOnce()
        #expect(first.read == 10 && !first.caughtUp && first.checkpointed)
        #expect(try store.historyConsumer(named: "test").token.value == before + 1)
        try await runner.finish()
        #expect(try store.historyConsumer(named: "test").token.value == before + 1)
        #expect(try FullTextIndex(path: dir.path("index.sqlite"), create: false).documents().count == 10)
        // Resumed: the rest, from the next transaction.
        try await drain(try self.runner(yaml, store: store, recorder: Recorder()))
        #expect(try store.historyConsumer(named: "test").token == store.currentPersistentHistoryToken())
        #expect(try FullTextIndex(path: dir.path("index.sqlite"), create: false).documents().count == 30)
    }

    /// A retried batch is posted as the same bytes: Debezium numbers each entity's records in a
    /// transaction, and re-encoding would carry the numbering on from the failed attempt.
    @Test func retriedBatchesArePostedAsTheSameBytes() async throws {
        let dir = TemporaryDirectory()
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        try PipelineFixtures.insertPosts(store, count: 12, perTransaction: 12)
        let server = try TestHTTPServer()
        defer { server.stop() }
        server.state.withLock { $0.unavailableLeft = 2 }
        let runner = try self.runner("""
            source: {store: s}
            sinks:
              - type: http
                url: \(server.url)
                format: debezium
                batch_size: 5
            retry: {initial: 100ms, max: 1s}
            """, store: store, recorder: Recorder())
        try await drain(runner)
        let attempts = server.state.withLock { $0.attempts }
        #expect(attempts.count == 5, "three batches, the first posted three times")
        #expect(Set(attempts.map(\.key)).count == 3)
        for attempt in attempts {
            let same = attempt.body == attempts.first { $0.key == attempt.key }!.body
            #expect(same, "every attempt of \(attempt.key) posts the same body")
        }
        let orders = server.state.withLock { $0.bodies }.flatMap { body -> [Int] in
            let json = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
            return (json?["records"] as? [[String: Any]] ?? []).compactMap { (($0["record"] as? [String: Any])?["transaction"] as? [String: Any])?["data_collection_order"] as? Int }
        }
        #expect(orders == Array(1...12), "each post numbered once, in order")
    }

    @Test func rejectedBatchesGoToTheDeadLettersWithTheResponse() async throws {
        let dir = TemporaryDirectory()
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        try PipelineFixtures.insertPosts(store, count: 12)
        let server = try TestHTTPServer()
        defer { server.stop() }
        server.state.withLock { $0.rejectAll = true }
        let recorder = Recorder()
        let runner = try self.runner("""
            source: {store: s}
            sinks:
              - type: http
                url: \(server.url)
                batch_size: 5
                on_error: dead_letter
                dead_letter: \(dir.path("dead"))
            """, store: store, recorder: recorder)
        try await drain(runner)
        let letters = try DeadLetterWriter.lines(in: dir.url.appendingPathComponent("dead"))
        #expect(letters.count == 12)
        for line in letters {
            let json = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(json["sink"] as? String == "http")
            #expect((json["error"] as? String)?.contains("HTTP 400") == true)
            #expect((json["error"] as? String)?.contains("the endpoint refuses this batch") == true)
            #expect(json["record"] is [String: Any])
        }
        #expect(try store.historyConsumer(named: "test").token == store.currentPersistentHistoryToken(), "the pipeline moved on")
        #expect(recorder.sleeps.withLock { $0.isEmpty }, "a 400 is not retried under dead_letter")
        #expect(try TributaryProcess.run(["verify", dir.path("dead")]).status == 0)
    }

    @Test func stopPolicyAndExhaustedRetriesStopThePipeline() async throws {
        let dir = TemporaryDirectory()
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        try PipelineFixtures.insertPosts(store, count: 5)
        let server = try TestHTTPServer()
        defer { server.stop() }
        server.state.withLock { $0.rejectAll = true }
        let recorder = Recorder()
        let stop = try self.runner("source: {store: s}\nsinks:\n  - type: http\n    url: \(server.url)\n    on_error: stop\n", store: store, recorder: recorder)
        await #expect(throws: TributaryError.self) { try await stop.runOnce() }
        #expect(try store.historyConsumer(named: "test").token.value == 0, "nothing committed")
        server.state.withLock { $0.rejectAll = false; $0.unavailableLeft = 100 }
        let exhausted = try self.runner("name: other\nsource: {store: s}\nsinks:\n  - type: http\n    url: \(server.url)\nretry: {max_attempts: 3}\n", store: store, recorder: recorder)
        do {
            _ = try await exhausted.runOnce()
            Issue.record("no error")
        } catch let error as TributaryError {
            #expect(error.code == .pipelineStopped)
            #expect(error.message.contains("after 3 attempts"))
        }
    }

    @Test func stopRequestCutsRetriesShortWithoutCommitting() async throws {
        let dir = TemporaryDirectory()
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        try PipelineFixtures.insertPosts(store, count: 5)
        let server = try TestHTTPServer()
        defer { server.stop() }
        server.state.withLock { $0.unavailableLeft = 1_000 }
        let recorder = Recorder()
        let runner = try self.runner("source: {store: s}\nsinks:\n  - type: http\n    url: \(server.url)\n", store: store, recorder: recorder)
        runner.shouldStop = { recorder.sleeps.withLock { $0.count >= 2 } }
        let step = try await runner.runOnce()
        #expect(step.interrupted)
        try await runner.finish()
        #expect(try store.historyConsumer(named: "test").token.value == 0)
    }

    @Test func snapshotComesFirstThenHistoryAfterIt() async throws {
        let dir = TemporaryDirectory()
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        let ids = try PipelineFixtures.insertPosts(store, count: 8)
        try store.deleteHistory(.deleteHistory(before: store.currentPersistentHistoryToken()))
        try PipelineFixtures.editPosts(store, Array(ids.prefix(2)), round: 2)
        let out = dir.path("out.ndjson")
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        let pipeline = try PipelineFixtures.pipeline("source: {store: s, snapshot: true}\nsinks: [{type: stdout}]\n")
        let runner = try PipelineRunner(pipeline: pipeline, coordinator: store, sinks: [StandardOutputSink(name: "stdout", format: .native, descriptor: handle.fileDescriptor)])
        try await drain(runner)
        try PipelineFixtures.editPosts(store, Array(ids[2..<4]), round: 3)
        let again = try PipelineRunner(pipeline: pipeline, coordinator: store, sinks: [StandardOutputSink(name: "stdout", format: .native, descriptor: handle.fileDescriptor)])
        try await drain(again)
        let types = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n").map { line -> String in
            let json = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return json?["type"] as? String ?? "?"
        }
        #expect(types == Array(repeating: "read", count: 7) + ["update", "update", "delete"], "the snapshot holds the rows as they were, history follows it")
    }
}
