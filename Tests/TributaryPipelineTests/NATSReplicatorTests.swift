import Foundation
import Testing
import Tributary
import TributaryPipeline
import TributaryStreams
import TributaryTestSupport
import TributaryNATSSink

/// `tributary replay nats://HOST:PORT/STREAM --into STORE --follow` against a real
/// nats-server: killed with SIGKILL at random points and restarted while the source keeps
/// publishing, the replica ends equal to the source; without --follow it drains and exits;
/// with --follow SIGTERM ends it with status 0.
@Suite(.serialized, .timeLimit(.minutes(10)), .tags(.servers)) struct NATSReplicatorTests {
    /// Every row, with its primary key, in a stable order (derived `now()` attributes left out).
    static func dump(_ coordinator: PersistentStoreCoordinator) throws -> [String] {
        guard let model = coordinator.managedObjectModel else { return [] }
        var local: Set<String> = []
        for entity in model.entities {
            for attribute in entity.attributes where attribute.derivation == .now { local.insert("\(entity.name).\(attribute.name)") }
        }
        var lines: [String] = []
        try coordinator.enumerateSnapshot(begin: { _ in }) { object in
            let values = object.properties.filter { !local.contains("\(object.objectID.entityName).\($0.name)") }.map { property in
                property.isMembershipChange ? "\(property.name)=[\(property.added.map { "\($0.entityName)/p\($0.primaryKey)" }.sorted().joined(separator: ","))]"
                    : "\(property.name)=\(property.after.map { "\($0)" } ?? "-")"
            }
            lines.append("\(object.objectID.entityName)/p\(object.objectID.primaryKey) " + values.joined(separator: " "))
        }
        return lines.sorted()
    }

    @Test func replicaKilledAtRandomPointsAndRestartedEndsEqualToTheSource() async throws {
        let dir = TemporaryDirectory()
        let server = try NATSServer.start()
        defer { server.stop() }
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        var ids = try PipelineFixtures.insertPosts(store, count: 3_000, perTransaction: 100)
        let pipeline = PipelineFixtures.repositoryRoot.appendingPathComponent("pipelines/nats-fanout.yml").path
        let model = PipelineFixtures.repositoryRoot.appendingPathComponent("examples/blog/model.yml").path
        let environment = ["TRIBUTARY_STORE": dir.path("s.sqlite"), "NATS_URL": server.url, "NATS_STREAM": "REPL"]
        let source = "\(server.url)/REPL"
        let replica = dir.path("replica.sqlite")

        // Without --model, the replica is made with the model the stream starts with (a schema message).
        let publish = try TributaryProcess.run(["run", pipeline, "--once"], environment: environment)
        #expect(publish.status == 0, "\(publish.stderr)")
        let noModel = try TributaryProcess.run(["replay", source, "--into", replica])
        #expect(noModel.status == 0, "\(noModel.stderr)")

        var generator = SystemRandomNumberGenerator()
        var killed = 0
        for round in 0..<6 {
            let process = try TributaryProcess.start(["replay", source, "--into", replica, "--model", model, "--follow"], environment: [:],
                                                     output: dir.url.appendingPathComponent("replay-\(round).log"))
            // The source changes and publishes while the replica applies.
            ids += try PipelineFixtures.insertPosts(store, count: 500, from: 100_000 + round * 500, perTransaction: 50)
            try PipelineFixtures.editPosts(store, Array(ids.prefix(250)), round: round)
            ids.removeFirst(250)
            let published = try TributaryProcess.run(["run", pipeline, "--once"], environment: environment)
            #expect(published.status == 0, "\(published.stderr)")
            try await Task.sleep(for: .milliseconds(Int.random(in: 50...400, using: &generator)))
            if process.isRunning { killed += 1 }
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        #expect(killed == 6, "every replica was killed while following")
        // Drained without --follow: applies what is left and exits.
        let drain = try TributaryProcess.run(["replay", source, "--into", replica])
        #expect(drain.status == 0, "\(drain.stderr) \(drain.stdout)")
        #expect(drain.stdout.contains("from stream REPL"))
        let target = PersistentStoreCoordinator()
        try target.addPersistentStore(with: PersistentStoreDescription(url: URL(fileURLWithPath: replica)))
        let expected = try Self.dump(store)
        let rows = 3_000 + 6 * 500 - 6 * 50
        #expect(expected.count == rows)
        let actual = try Self.dump(target)
        let differences = Array(Set(actual).symmetricDifference(Set(expected)).sorted().prefix(4))
        #expect(differences.isEmpty && actual.count == expected.count, "the replica equals the source: \(actual.count) rows, not \(expected.count); first differences: \(differences)")

        // With --follow, a new change arrives in the replica, and SIGTERM ends the replay with status 0.
        let follower = try TributaryProcess.start(["replay", source, "--into", replica, "--follow"], environment: [:], output: dir.url.appendingPathComponent("follow.log"))
        defer { if follower.isRunning { kill(follower.processIdentifier, SIGKILL) } }
        try PipelineFixtures.insertPosts(store, count: 1, from: 900_000)
        #expect(try TributaryProcess.run(["run", pipeline, "--once"], environment: environment).status == 0)
        let deadline = Date().addingTimeInterval(20)
        while try Self.dump(target).count < expected.count + 1, Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        let followed = try Self.dump(target) == Self.dump(store)
        #expect(followed, "a change published while the replica follows is applied")
        kill(follower.processIdentifier, SIGTERM)
        follower.waitUntilExit()
        #expect(follower.terminationReason == .exit && follower.terminationStatus == 0)
    }
}
