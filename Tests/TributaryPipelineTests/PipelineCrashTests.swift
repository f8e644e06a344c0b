import Foundation
import TributaryTestSupport
import Testing
import Tributary
import TributaryPipeline

/// The real `tributary run` process, killed with SIGKILL at random points and restarted,
/// leaves the full-text index exactly as a clean run does; SIGTERM drains and exits 0 with
/// the checkpoint saved.
@Suite(.serialized) struct PipelineCrashTests {
    static func pipeline(name: String, index: String) -> String {
        """
        name: \(name)
        source:
          store: ${TRIBUTARY_STORE}
          entities: [Post]
        transforms:
          - exclude: [externalID]
        sinks:
          - type: fts
            path: ${TRIBUTARY_OUT}/\(index)
            entities: {Post: [title, content]}
            on_error: stop
        checkpoint: {records: 500, seconds: 1s}
        """
    }

    /// A store with about `changes` changes: inserts in transactions of 100, then rounds of edits.
    static func makeStore(_ dir: TemporaryDirectory, posts: Int) throws -> (PersistentStoreCoordinator, [ObjectID]) {
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        let ids = try PipelineFixtures.insertPosts(store, count: posts, perTransaction: 100)
        return (store, ids)
    }

    @Test func killedAtRandomPointsAndRestartedLeavesTheIndexAsACleanRunDoes() async throws {
        let dir = TemporaryDirectory()
        // 20,000 changes: 4,000 inserts, then ten rounds of 1,000 inserts, 500 updates and 100 deletes,
        // each round arriving before a run that is killed at a random point.
        var (store, ids) = try Self.makeStore(dir, posts: 4_000)
        let environment = ["TRIBUTARY_STORE": dir.path("s.sqlite"), "TRIBUTARY_OUT": dir.path("out")]
        let crashing = dir.path("crash.yml"), clean = dir.path("clean.yml")
        try Self.pipeline(name: "crash", index: "crash.sqlite").write(toFile: crashing, atomically: true, encoding: .utf8)
        try Self.pipeline(name: "clean", index: "clean.sqlite").write(toFile: clean, atomically: true, encoding: .utf8)
        var killedWithWorkLeft = 0
        for round in 0..<10 {
            ids += try PipelineFixtures.insertPosts(store, count: 1_000, from: 100_000 + round * 1_000, perTransaction: 100)
            try PipelineFixtures.editPosts(store, Array(ids.prefix(500)), round: round)
            ids.removeFirst(500)
            // Even rounds: killed early; odd rounds: once the index's position has passed a random token of the round's work
            // (it moves at each checkpoint, every 500 records).
            let indexed: () -> Int64? = { try? FullTextIndex(path: dir.path("out/crash.sqlite"), create: false).position(of: "crash")?.token }
            let before = indexed() ?? 0
            let process = try TributaryProcess.start(["run", crashing], environment: environment, output: dir.url.appendingPathComponent("run-\(round).log"))
            let end = try store.currentPersistentHistoryToken().value
            let left = CrashPoint.killAtRandomPoint(process, round: round, from: before, to: end, progress: indexed)
            if left { killedWithWorkLeft += 1 }
            #expect(process.terminationReason == .uncaughtSignal)
        }
        #expect(killedWithWorkLeft >= 3, "kills landed while the pipeline had work left (\(killedWithWorkLeft) of 10)")
        let finish = try TributaryProcess.run(["run", crashing, "--once"], environment: environment)
        #expect(finish.status == 0, "\(finish.stderr)")
        let reference = try TributaryProcess.run(["run", clean, "--once"], environment: environment)
        #expect(reference.status == 0, "\(reference.stderr)")
        let crashed = try FullTextIndex(path: dir.path("out/crash.sqlite"), create: false).documents()
        let expected = try FullTextIndex(path: dir.path("out/clean.sqlite"), create: false).documents()
        #expect(expected.count == 14_000 - 10 * 100)
        #expect(crashed == expected)
        #expect(try store.historySize().changes >= 20_000)
        let status = try TributaryProcess.run(["status", dir.path("s.sqlite"), "--json"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        let consumers = try #require(json["consumers"] as? [[String: Any]])
        #expect(consumers.map { $0["name"] as? String } == ["clean", "crash"])
        #expect(consumers.allSatisfy { $0["lagChanges"] as? Int == 0 })
    }

    @Test func sigtermDrainsCommitsTheCheckpointAndExitsZero() async throws {
        let dir = TemporaryDirectory()
        let (store, _) = try Self.makeStore(dir, posts: 20_000)
        let environment = ["TRIBUTARY_STORE": dir.path("s.sqlite"), "TRIBUTARY_OUT": dir.path("out")]
        let file = dir.path("p.yml")
        try Self.pipeline(name: "term", index: "term.sqlite").write(toFile: file, atomically: true, encoding: .utf8)
        let log = dir.url.appendingPathComponent("run.log")
        let process = try TributaryProcess.start(["run", file], environment: environment, output: log)
        // Wait until the pipeline has indexed something, then ask it to stop.
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if FileManager.default.fileExists(atPath: dir.path("out/term.sqlite")),
               let position = try? FullTextIndex(path: dir.path("out/term.sqlite"), create: false).position(of: "term"), position.token > 0 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        let output = try String(contentsOf: log, encoding: .utf8)
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0, "\(output)")
        let consumer = try store.historyConsumer(named: "term")
        #expect(consumer.token.value > 0, "the checkpoint was committed")
        let position = try #require(try FullTextIndex(path: dir.path("out/term.sqlite"), create: false).position(of: "term"))
        #expect(position.token >= consumer.token.value, "the index holds everything the consumer committed")
        #expect(output.contains("consumer term at token \(consumer.token.value)"))
    }

    @Test func runningPipelineFollowsNewCommits() async throws {
        let dir = TemporaryDirectory()
        let (store, _) = try Self.makeStore(dir, posts: 100)
        let environment = ["TRIBUTARY_STORE": dir.path("s.sqlite"), "TRIBUTARY_OUT": dir.path("out")]
        let file = dir.path("p.yml")
        try Self.pipeline(name: "follow", index: "follow.sqlite").write(toFile: file, atomically: true, encoding: .utf8)
        let process = try TributaryProcess.start(["run", file], environment: environment, output: dir.url.appendingPathComponent("run.log"))
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        func indexed() -> Int { (try? FullTextIndex(path: dir.path("out/follow.sqlite"), create: false).documents().count) ?? 0 }
        var deadline = Date().addingTimeInterval(30)
        while indexed() < 100, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(indexed() == 100)
        for round in 0..<3 {
            try PipelineFixtures.insertPosts(store, count: 1, from: 1_000 + round)
            deadline = Date().addingTimeInterval(10)
            while indexed() < 101 + round, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(indexed() == 101 + round, "a commit while the pipeline waits is delivered")
        }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    @Test func sigtermDuringRetriesExitsZeroWithoutCommittingTheFailedBatch() async throws {
        let dir = TemporaryDirectory()
        let (store, _) = try Self.makeStore(dir, posts: 50)
        let server = try TestHTTPServer()
        defer { server.stop() }
        server.state.withLock { $0.unavailableLeft = 1_000_000 }
        let file = dir.path("p.yml")
        try "name: hook\nsource: {store: \(dir.path("s.sqlite"))}\nsinks:\n  - type: http\n    url: \(server.url)\nretry: {initial: 50ms, max: 200ms}\n"
            .write(toFile: file, atomically: true, encoding: .utf8)
        let process = try TributaryProcess.start(["run", file], environment: [:], output: dir.url.appendingPathComponent("run.log"))
        while server.state.withLock({ $0.requests }) < 3 { try await Task.sleep(for: .milliseconds(20)) }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(try store.historyConsumer(named: "hook").token.value == 0)
    }
}
