import Foundation
import Testing
import Tributary
import TributaryPipeline
import TributaryTestSupport
import TributaryNATSSink

/// Two stores publish with the shipped nats-fanout.yml to one server and stream (its subject
/// holds `{store}`); a replica copies one of them: the one chosen with `--store`, or the first
/// seen, refusing the other with one line instead of merging them by primary key (issue 18).
@Suite(.serialized, .timeLimit(.minutes(10)), .tags(.servers)) struct NATSReplicaStoreTests {
    static func count(_ store: String) throws -> String {
        try TributaryProcess.run(["count", store, "--entity", "Post"]).stdout
    }

    @Test func aReplicaCopiesOneStore() throws {
        let dir = TemporaryDirectory()
        let server = try NATSServer.start()
        defer { server.stop() }
        let first = try PipelineFixtures.store(at: dir.url.appendingPathComponent("a.sqlite"))
        let second = try PipelineFixtures.store(at: dir.url.appendingPathComponent("b.sqlite"))
        try PipelineFixtures.insertPosts(first, count: 30)
        try PipelineFixtures.insertPosts(second, count: 20, from: 1_000)
        let pipeline = PipelineFixtures.repositoryRoot.appendingPathComponent("pipelines/nats-fanout.yml").path
        let model = PipelineFixtures.repositoryRoot.appendingPathComponent("examples/blog/model.yml").path
        for name in ["a.sqlite", "b.sqlite"] {
            let run = try TributaryProcess.run(["run", pipeline, "--once"], environment: ["TRIBUTARY_STORE": dir.path(name), "NATS_URL": server.url, "NATS_STREAM": "SHARED"])
            #expect(run.status == 0, "\(run.stderr)")
        }
        let firstID = first.persistentStores[0].identifier.uuidString.lowercased()
        let secondID = second.persistentStores[0].identifier.uuidString.lowercased()
        let source = "\(server.url)/SHARED"

        // Unchosen: the first store seen is copied; the other is refused, not merged.
        let merged = try TributaryProcess.run(["replay", source, "--into", dir.path("r1.sqlite"), "--model", model])
        #expect(merged.status != 0)
        #expect(merged.stderrLines.count == 1 && merged.stderr.contains("is a change of store \(secondID), and this replica copies store \(firstID)"), "\(merged.stderr)")
        #expect(try Self.count(dir.path("r1.sqlite")) == "30\n")

        // Chosen: only that store's changes are applied.
        let chosen = try TributaryProcess.run(["replay", source, "--into", dir.path("r2.sqlite"), "--model", model, "--store", secondID])
        #expect(chosen.status == 0, "\(chosen.stderr)")
        #expect(try Self.count(dir.path("r2.sqlite")) == "20\n")
        let wrong = try TributaryProcess.run(["replay", source, "--into", dir.path("r2.sqlite"), "--store", firstID])
        #expect(wrong.status != 0 && wrong.stderr.contains("the replica holds changes of store \(secondID)"), "\(wrong.stderr)")
    }
}
