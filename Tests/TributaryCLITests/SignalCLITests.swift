import Foundation
import Testing
import TributaryTestSupport

/// SIGINT and SIGTERM end `replay nats://… --follow` as they end `tail --follow`, `export
/// --follow` and `run` (RunStatusCLITests): the batch in hand is applied and acknowledged,
/// the summary is printed, the exit status is 0, and nothing is lost or applied twice: a
/// replay started afterwards applies only what was published since.
@Suite(.tags(.servers)) struct SignalCLITests {
    let scratch = Scratch()

    @Test func replayFollowEndsTheSameWayOnSIGINTAndSIGTERMWithNothingLost() async throws {
        let server = try NATSServer.start()
        defer { server.stop() }
        let store = try CLI.makeBlogStore(at: scratch.path("s.sqlite"))
        let pipeline = CLI.repositoryRoot.appendingPathComponent("pipelines/nats-fanout.yml").path
        let environment = ["TRIBUTARY_STORE": store, "NATS_URL": server.url, "NATS_STREAM": "SIG"]
        var published = 0
        func publish(_ count: Int) throws {
            try CLI.run(["import", store, "--entity", "Post", "--batch-size", "5", "-"], stdin: CLI.posts(published..<published + count))
            published += count
            let run = try CLI.run(["run", pipeline, "--once"], environment: environment)
            #expect(run.status == 0, "\(run.stderr)")
        }
        func posts(_ replica: String) throws -> Int { Int(try CLI.run(["count", replica, "--entity", "Post"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1 }
        try publish(3)
        for (number, signal) in [SIGINT, SIGTERM].enumerated() {
            let replica = scratch.path("replica-\(number).sqlite"), log = URL(fileURLWithPath: scratch.path("replay-\(number).log"))
            let replay = try TributaryProcess.start(["replay", "\(server.url)/SIG", "--into", replica, "--model", CLI.blogModel, "--follow"], environment: [:], output: log)
            defer { if replay.isRunning { kill(replay.processIdentifier, SIGKILL) } }
            #expect(await Wait.until(.seconds(30)) { FileManager.default.fileExists(atPath: replica) && (try? posts(replica)) == published })
            try publish(40)   // applied while it follows; the signal may come in the middle
            kill(replay.processIdentifier, signal)
            replay.waitUntilExit()
            let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            #expect(replay.terminationReason == .exit && replay.terminationStatus == 0, "signal \(signal): \(output)")
            #expect(output.contains(" from stream SIG into \(replica)"), "signal \(signal): \(output)")
            let applied = try posts(replica)
            // The rest, and nothing twice: the replica's consumer is where the replica is.
            let rest = try CLI.run(["replay", "\(server.url)/SIG", "--into", replica])
            #expect(rest.status == 0, "\(rest.stderr)")
            #expect(try posts(replica) == published, "\(applied) applied before the signal; \(rest.stdout)")
            let again = try CLI.run(["replay", "\(server.url)/SIG", "--into", replica])
            #expect(again.stdout.hasPrefix("applied 0 records from stream SIG"), "\(again.stdout)")
        }
    }
}
