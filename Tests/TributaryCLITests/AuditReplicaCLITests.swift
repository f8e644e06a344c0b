import Foundation
import Testing
import TributaryTestSupport

/// `tributary audit verify STORE --against` a replica a pipeline keeps: a PostgreSQL mirror
/// (the chain hash in `tributary_checkpoints`) or a NATS JetStream stream (the newest
/// `Tributary-Chain` header). A store whose history was rewritten after delivery, every hash
/// recomputed, or whose newest transactions were dropped, fails naming the token.
@Suite(.serialized, .tags(.servers)) struct AuditReplicaCLITests {
    let scratch = Scratch()

    /// A blog store with five transactions (tokens 1…5), bob's the third.
    func makeStore() throws -> String {
        let db = try CLI.makeBlogStore(at: scratch.path("blog-\(UUID().uuidString).sqlite"))
        for (i, author) in ["ann", "ann", "bob", "ann", "ann"].enumerated() {
            let imported = try CLI.run(["import", db, "--entity", "Post", "--author", author], stdin: CLI.posts(i * 2..<i * 2 + 2))
            #expect(imported.status == 0, "\(imported.stderr)")
        }
        return db
    }

    /// Runs a pipeline `name` from `db` into `sink` (the YAML of one sinks entry) once.
    func deliver(_ db: String, name: String, sink: String, environment: [String: String] = [:]) throws {
        let file = scratch.write("\(name)-\(UUID().uuidString).yml", "name: \(name)\nsource: {store: \(db), consumer: \(name)}\nsinks:\n\(sink)")
        let run = try CLI.run(["run", file, "--once"], environment: environment)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    }

    /// Two stores delivered to the replica by `deliver` (the store and its pipeline's name);
    /// `against` the replica's URL and options for the first, the second. Checks the first
    /// matches, then fails once its history is rewritten with every hash recomputed, and the
    /// second fails once its newest transactions are dropped.
    func expectReplicaVouches(against first: [String], _ second: [String], label: (String) -> String, deliver: (String, String) throws -> Void) throws {
        let (a, b) = (try makeStore(), try makeStore())
        try deliver(a, "replica-a")
        try deliver(b, "replica-b")
        let verified = try CLI.run(["audit", "verify", a, "--against"] + first)
        #expect(verified.status == 0 && verified.stdout.contains(", and \(label("replica-a")) at token 5"), "\(verified.stdout)\(verified.stderr)")
        let json = try CLI.run(["audit", "verify", a, "--json", "--against"] + first)
        let tokens = try CLI.json(json.stdout)["matchedReplicaTokens"] as? [String: Int]
        #expect(tokens?.count == 1 && tokens?.values.first == 5, "one pipeline's point, at token 5: \(json.stdout)\(json.stderr)")

        #expect(try CLI.sqlite3(a, """
            UPDATE _tributary_history_source SET author = 'mallory' WHERE author = 'bob';
            UPDATE _tributary_metadata SET value = '2' WHERE key = 'historyFormat';
            """).status == 0)
        #expect(try CLI.run(["audit", "verify", a]).status == 0, "the recomputed chain holds by itself")
        let rewritten = try CLI.run(["audit", "verify", a, "--against"] + first)
        #expect(rewritten.status != 0 && rewritten.stderrLines.count == 1, "\(rewritten.stdout)\(rewritten.stderr)")
        #expect(rewritten.stderr.contains("the store's history was edited: through token 5 it differs from \(label("replica-a"))"), "\(rewritten.stderr)")

        #expect(try CLI.sqlite3(b, "DELETE FROM _tributary_history WHERE token >= 4;").status == 0)
        let dropped = try CLI.run(["audit", "verify", b, "--against"] + second)
        #expect(dropped.status != 0 && dropped.stderrLines.count == 1, "\(dropped.stdout)\(dropped.stderr)")
        #expect(dropped.stderr.contains("token 5, which \(label("replica-b")) holds, is missing from it"), "\(dropped.stderr)")
    }

    @Test func aPostgresMirrorVouchesForTheHistoryItHolds() throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        // The first store into schema public, the second into its own (--schema).
        try expectReplicaVouches(against: [server.url], [server.url, "--schema", "b"], label: { "the PostgreSQL mirror \(server.url) (pipeline \($0))" }) { db, name in
            try deliver(db, name: name, sink: "  - type: postgres\n    url: \(server.url)\n    schema: \(name == "replica-a" ? "public" : "b")\n")
        }
        let store = try makeStore()
        try deliver(store, name: "other", sink: "  - type: postgres\n    url: \(server.url)\n")
        #expect(try CLI.run(["audit", "verify", store, "--against", server.url, "--pipeline", "other"]).status == 0)
        for (arguments, fragment) in [([server.url, "--pipeline", "nope"], "public.tributary_checkpoints has no row of pipeline nope of store "),
                                      ([server.url, "--schema", "nope"], "PostgreSQL has no table nope.tributary_checkpoints"),
                                      ([server.url.replacingOccurrences(of: "tributary@", with: "")], "the postgres URL has no user")] {
            let failed = try CLI.run(["audit", "verify", store, "--against"] + arguments)
            #expect(failed.status != 0 && failed.stderrLines.count == 1 && failed.stderr.contains(fragment), "\(arguments): \(failed.stderr)")
        }
    }

    @Test func aNATSStreamVouchesForTheHistoryItHolds() throws {
        let server = try NATSServer.start()
        defer { server.stop() }
        let pipeline = CLI.repositoryRoot.appendingPathComponent("pipelines/nats-fanout.yml").path
        let url = "\(server.url)/AUDIT"
        try expectReplicaVouches(against: [url], [url], label: { _ in "the NATS stream AUDIT at \(server.url) (pipeline nats-fanout)" }) { db, _ in
            let run = try CLI.run(["run", pipeline, "--once"], environment: ["TRIBUTARY_STORE": db, "NATS_URL": server.url, "NATS_STREAM": "AUDIT"])
            #expect(run.status == 0, "\(run.stderr)")
        }
        let store = try makeStore()
        for (arguments, fragment) in [([url, "--pipeline", "nope"], "stream AUDIT holds no message of pipeline nope of store "),
                                      ([url], "stream AUDIT holds no message of store "),
                                      ([server.url + "/NOPE"], "there is no stream NOPE"),
                                      ([server.url], "is not nats://HOST:PORT/STREAM")] {
            let failed = try CLI.run(["audit", "verify", store, "--against"] + arguments)
            #expect(failed.status != 0 && failed.stderrLines.count == 1 && failed.stderr.contains(fragment), "\(arguments): \(failed.stderr)")
        }
        let misplaced = try CLI.run(["audit", "verify", store, "--pipeline", "x"])
        #expect(misplaced.status != 0 && misplaced.stderr.contains("--pipeline goes with --against"), "\(misplaced.stderr)")
    }
}
