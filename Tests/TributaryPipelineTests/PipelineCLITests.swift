import Foundation
import TributaryTestSupport
import Testing
import Tributary
import TributaryPipeline

/// `run`, `search` and `status` from the shell, and secrets that never show.
@Suite struct PipelineCLITests {
    @Test func searchRanksAndPrintsSnippets() throws {
        let dir = TemporaryDirectory()
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        try PipelineFixtures.insertPosts(store, count: 30)
        let environment = ["TRIBUTARY_STORE": dir.path("s.sqlite"), "TRIBUTARY_OUT": dir.path("out")]
        let run = try TributaryProcess.run(["run", PipelineFixtures.repositoryRoot.appendingPathComponent("pipelines/search-index.yml").path, "--once"], environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.isEmpty)
        let json = try TributaryProcess.run(["search", dir.path("out/search.sqlite"), "swift AND sqlite", "--limit", "3", "--json"])
        #expect(json.status == 0)
        let hits = json.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(hits.count == 3)
        #expect(hits.allSatisfy { ($0["snippet"] as? String)?.contains("[swift]") == true && $0["entity"] as? String == "Post" })
        let ranks = hits.compactMap { $0["rank"] as? Double }
        #expect(ranks == ranks.sorted())
        let text = try TributaryProcess.run(["search", dir.path("out/search.sqlite"), "nothingmatches"])
        #expect(text.stdout == "no matches\n")
        let bad = try TributaryProcess.run(["search", dir.path("out/search.sqlite"), "AND AND"])
        #expect(bad.status != 0)
        #expect(bad.stderr.split(separator: "\n").count == 1 && bad.stderr.contains("the query cannot be run"))
        let missing = try TributaryProcess.run(["search", dir.path("nope.sqlite"), "x"])
        #expect(missing.status != 0 && missing.stderr.contains("no index"))
        #expect(!FileManager.default.fileExists(atPath: dir.path("nope.sqlite")))
        let status = try TributaryProcess.run(["status", dir.path("s.sqlite")])
        #expect(status.stdout.contains("search-index") && status.stdout.contains("current"))
    }

    @Test func badPipelineFilePrintsOneLineAndWritesNothing() throws {
        let dir = TemporaryDirectory()
        let file = dir.path("bad.yml")
        try "source: {store: s}\nsinks:\n  - type: segments\n    directory: \(dir.path("out"))\n    format: avro\n".write(toFile: file, atomically: true, encoding: .utf8)
        let result = try TributaryProcess.run(["run", file, "--once"])
        #expect(result.status != 0)
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(result.stderr.contains("bad.yml:5: sinks[0].format: unknown format 'avro'"))
        #expect(!FileManager.default.fileExists(atPath: dir.path("out")))
    }

    @Test func anUnknownSinkTypeNamesEveryTypeTheCommandKnows() throws {
        let dir = TemporaryDirectory()
        let file = dir.path("bad.yml")
        try "source: {store: s}\nsinks:\n  - type: kafka\n".write(toFile: file, atomically: true, encoding: .utf8)
        let result = try TributaryProcess.run(["run", file, "--once"])
        #expect(result.status != 0)
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(result.stderr.contains("bad.yml:3: sinks[0].type: unknown sink type 'kafka'; the sink types registered are fts, http, nats, postgres, redis, segments, stdout"),
                "\(result.stderr)")
    }

    /// The metrics server lives in the command (the libraries only record through
    /// swift-metrics): an address it cannot serve fails the run with one line, before anything runs.
    @Test func metricsThatCannotBeServedFailTheRunWithOneLine() throws {
        let dir = TemporaryDirectory()
        let busy = try TestHTTPServer()
        defer { busy.stop() }
        let out = dir.path("out")
        for (address, message) in [("127.0.0.1:\(busy.port)", "cannot serve metrics on 127.0.0.1:\(busy.port)"),
                                   ("example.com:9464", "'example.com:9464' is not a metrics address")] {
            let file = dir.path("metrics.yml")
            try "source: {store: s}\nsinks:\n  - type: segments\n    directory: \(out)\nmetrics: \(address)\n".write(toFile: file, atomically: true, encoding: .utf8)
            let result = try TributaryProcess.run(["run", file, "--once"])
            #expect(result.status != 0)
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(result.stderr.contains(message), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: out))
        }
    }

    @Test func aSecretFromTheEnvironmentNeverAppears() throws {
        let secret = "s3cr3t-\(UUID().uuidString)"
        let dir = TemporaryDirectory()
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        try PipelineFixtures.insertPosts(store, count: 12)
        let server = try TestHTTPServer()
        defer { server.stop() }
        server.state.withLock { $0.rejectAll = true }
        let environment = ["TRIBUTARY_STORE": dir.path("s.sqlite"), "TRIBUTARY_OUT": dir.path("out"), "WEBHOOK_URL": server.url, "WEBHOOK_TOKEN": secret]
        let webhook = PipelineFixtures.repositoryRoot.appendingPathComponent("pipelines/webhook.yml").path
        var outputs: [String] = []
        // Rejected: dead letters with the response.
        let rejected = try TributaryProcess.run(["run", webhook, "--once"], environment: environment)
        #expect(rejected.status == 0, "\(rejected.stderr)")
        #expect(rejected.stderr.contains("HTTP 400"))
        outputs += [rejected.stdout, rejected.stderr]
        #expect(server.state.withLock { $0.authorizations } == ["Bearer \(secret)"], "the token was sent")
        // Unreachable with stop: the error.
        let file = dir.path("stop.yml")
        try "name: stop\nsource: {store: \(dir.path("s.sqlite"))}\nsinks:\n  - type: http\n    url: http://127.0.0.1:1/h\n    bearer_token_env: WEBHOOK_TOKEN\nretry: {initial: 1ms, max_attempts: 2}\n"
            .write(toFile: file, atomically: true, encoding: .utf8)
        let stopped = try TributaryProcess.run(["run", file, "--once"], environment: environment)
        #expect(stopped.status != 0)
        outputs += [stopped.stdout, stopped.stderr]
        // The secret substituted into places that end up in errors.
        for (index, yaml) in ["source: {store: s}\nsinks:\n  - type: segments\n    directory: d\n    format: ${WEBHOOK_TOKEN}\n",
                              "source: {store: s}\nsinks:\n  - type: http\n    url: ${WEBHOOK_TOKEN}\n",
                              "source: {store: s}\nsinks:\n  - type: ${WEBHOOK_TOKEN}\n",
                              "source: {store: s}\nsinks:\n  - type: http\n    url: http://127.0.0.1:1/h\n    bearer_token_env: MISSING_TOKEN\n"].enumerated() {
            let path = dir.path("bad-\(index).yml")
            try yaml.write(toFile: path, atomically: true, encoding: .utf8)
            let result = try TributaryProcess.run(["run", path, "--once"], environment: environment)
            #expect(result.status != 0)
            outputs += [result.stdout, result.stderr]
        }
        for output in outputs { #expect(!output.contains(secret)) }
        // Nor in any file the pipelines wrote (dead letters, manifests).
        let enumerator = FileManager.default.enumerator(atPath: dir.path("out"))
        var files = 0
        while let name = enumerator?.nextObject() as? String {
            guard let data = FileManager.default.contents(atPath: dir.path("out/" + name)) else { continue }
            files += 1
            #expect(!String(decoding: data, as: UTF8.self).contains(secret), "\(name)")
        }
        #expect(files > 0)
        let letters = try DeadLetterWriter.lines(in: dir.url.appendingPathComponent("out/webhook-dead-letters"))
        #expect(letters.count == 12)
        #expect(letters.allSatisfy { !$0.contains(secret) })
    }
}
