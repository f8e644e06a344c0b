import Foundation
import Testing
import Tributary
import TributaryHTTPSink
@testable import TributaryPipeline

/// Pipeline files: every section read, `${NAME}` substitution, and bad files each with their precise error.
@Suite struct PipelineFileTests {
    static let good = """
        name: search
        source:
          store: ${STORE:-blog.sqlite}
          consumer: search-index
          entities: [Post, Tag]
          authors: importer
          change_types: [insert, update, delete]
          snapshot: true
        transforms:
          - filter: "title BEGINSWITH[c] 'post' OR title == nil"
            entities: [Post]
          - exclude: [Post.content]
          - rename: {Post: posts}
          - redact: email
          - hash: [name]
            salt_env: SALT
        sinks:
          - type: fts
            path: ${OUT}/search.sqlite
            entities: {posts: [title, content]}
          - type: http
            name: hook
            url: https://example.com/hook?x=1
            bearer_token_env: HOOK_TOKEN
            timeout: 2s
            on_error: dead_letter
            dead_letter: ${OUT}/dead
            batch_size: 50
        checkpoint: {records: 500, seconds: 250ms}
        retry: {initial: 10ms, max: 1m, max_attempts: 7}
        prune: {consumed: true, max_age: 7d}
        metrics: 9464
        """

    @Test func readsEverySection() throws {
        let pipeline = try PipelineFixtures.pipeline(Self.good, environment: ["OUT": "/tmp/out", "SALT": "pepper"])
        #expect(pipeline.name == "search")
        #expect(pipeline.source.store == "blog.sqlite")
        #expect(pipeline.source.consumer == "search-index")
        #expect(pipeline.source.filter.entities == ["Post", "Tag"])
        #expect(pipeline.source.filter.authors == ["importer"])
        #expect(pipeline.source.filter.changeTypes == [.insert, .update, .delete])
        #expect(pipeline.source.snapshot)
        #expect(pipeline.transforms.count == 5)
        #expect(pipeline.sinks.map(\.name) == ["fts", "hook"])
        #expect(pipeline.sinks[0].configuration as? FullTextIndexSinkSettings == FullTextIndexSinkSettings(path: "/tmp/out/search.sqlite", entities: ["posts": ["title", "content"]]))
        #expect(pipeline.sinks[1].configuration as? HTTPSinkSettings
                == HTTPSinkSettings(url: URL(string: "https://example.com/hook?x=1")!, bearerTokenEnvironment: "HOOK_TOKEN", timeout: 2))
        #expect(pipeline.sinks[1].onError == .deadLetter)
        #expect(pipeline.sinks[1].deadLetterDirectory == "/tmp/out/dead")
        #expect(pipeline.sinks[1].batchSize == 50)
        #expect(pipeline.checkpoint.records == 500)
        #expect(pipeline.checkpoint.seconds == 0.25)
        #expect(pipeline.retry.initial == 0.01 && pipeline.retry.maximum == 60 && pipeline.retry.maximumAttempts == 7)
        #expect(pipeline.prune!.maximumAge! == 604_800)
        #expect(pipeline.metricsAddress == "127.0.0.1:9464")
    }

    @Test func substitutesVariablesAndDefaults() throws {
        let yaml = "source: {store: \"${DIR:-/data}/${NAME}.sqlite\"}\nsinks: [{type: stdout}]\n"
        #expect(try PipelineFixtures.pipeline(yaml, environment: ["NAME": "blog"]).source.store == "/data/blog.sqlite")
        #expect(try PipelineFixtures.pipeline(yaml, environment: ["NAME": "blog", "DIR": "/x"]).source.store == "/x/blog.sqlite")
        let defaults = try PipelineFixtures.pipeline(yaml, environment: ["NAME": "b"])
        #expect(defaults.name == "test" && defaults.source.consumer == "test" && defaults.sinks[0].onError == .retry && defaults.sinks[0].batchSize == 100)
    }

    /// Each bad file, the line and key its error names, and a piece of the message.
    static let badFiles: [(yaml: String, location: String, message: String)] = [
        ("source: [a\n", "test.yml:2", "not valid YAML"),
        ("- a\n- b\n", "test.yml:1", "a pipeline file is a mapping"),
        ("source: {store: s}\nsinks: [{type: stdout}]\ncheckpoints: {records: 1}\n", "test.yml:3: checkpoints", "unknown key 'checkpoints'"),
        ("sinks: [{type: stdout}]\n", "test.yml:1: source", "no source"),
        ("source: {store: s}\n", "test.yml:1: sinks", "no sinks"),
        ("source: {stor: s}\nsinks: [{type: stdout}]\n", "test.yml:1: source.stor", "unknown key 'stor'"),
        ("source: {store: s}\nsinks:\n  - type: kafka\n", "test.yml:3: sinks[0].type", "unknown sink type 'kafka'"),
        ("source: {store: s}\nsinks:\n  - type: stdout\n    on_error: ignore\n", "test.yml:4: sinks[0].on_error", "unknown on_error 'ignore'"),
        ("source: {store: s}\nsinks:\n  - type: stdout\n    on_error: dead_letter\n", "test.yml:3: sinks[0].dead_letter", "needs a dead_letter directory"),
        ("source: {store: s}\nsinks:\n  - type: http\n    url: https://x/h\n    token: abc\n", "test.yml:5: sinks[0].token", "credentials are not written"),
        ("source: {store: s}\nsinks:\n  - type: http\n    url: https://u:p@x/h\n", "test.yml:4: sinks[0].url", "the url holds credentials"),
        ("source: {store: s}\nsinks:\n  - type: http\n    url: ftp://x/h\n", "test.yml:4: sinks[0].url", "not an http or https URL"),
        ("source: {store: s}\nsinks:\n  - type: fts\n    path: i.sqlite\n", "test.yml:3: sinks[0].entities", "needs entities"),
        ("source: {store: s}\nsinks:\n  - type: segments\n    directory: d\n    format: avro\n", "test.yml:5: sinks[0].format", "unknown format 'avro'"),
        ("source: {store: s}\nsinks: [{type: stdout}]\ncheckpoint: {records: 0}\n", "test.yml:3: checkpoint.records", "at least 1"),
        ("source: {store: s}\nsinks: [{type: stdout}]\ncheckpoint: {seconds: soon}\n", "test.yml:3: checkpoint.seconds", "not a duration"),
        ("source:\n  store: ${MISSING_VARIABLE}/blog.sqlite\nsinks: [{type: stdout}]\n", "test.yml:2: source.store", "MISSING_VARIABLE is not set"),
        ("source: {store: s}\ntransforms:\n  - filter: \"ANY tags.name == 'x'\"\nsinks: [{type: stdout}]\n", "test.yml:3: transforms[0].filter", "cannot be evaluated"),
        ("source: {store: s}\ntransforms:\n  - filter: \"title ==\"\nsinks: [{type: stdout}]\n", "test.yml:3: transforms[0].filter", "the predicate cannot be used"),
        ("source: {store: s}\ntransforms:\n  - include: [a]\n    exclude: [b]\nsinks: [{type: stdout}]\n", "test.yml:3: transforms[0]", "one action, not include and exclude"),
        ("source: {store: s}\nsinks:\n  - type: stdout\n  - type: stdout\n    name: stdout\n", "test.yml:4: sinks[1].name", "two sinks are named 'stdout'"),
        ("source: {store: s, snapshot: maybe}\nsinks: [{type: stdout}]\n", "test.yml:1: source.snapshot", "true or false"),
        ("source: {store: s}\nsinks: [{type: stdout}]\nmetrics: localhost\n", "test.yml:3: metrics", "'localhost' is not a metrics address"),
        ("source: {store: s, change_types: [upsert]}\nsinks: [{type: stdout}]\n", "test.yml:1: source.change_types", "unknown change type 'upsert'"),
    ]

    @Test(arguments: 0..<badFiles.count)
    func badFileGivesItsPreciseError(_ index: Int) throws {
        let bad = Self.badFiles[index]
        do {
            _ = try PipelineFixtures.pipeline(bad.yaml)
            Issue.record("no error for file \(index)")
        } catch let error as TributaryError {
            #expect(error.code == .invalidPipeline)
            #expect(error.location == bad.location, "file \(index): \(error)")
            #expect(error.message.contains(bad.message), "file \(index): \(error)")
        }
    }

    @Test func unknownKeyListsTheAllowedKeys() throws {
        do {
            _ = try PipelineFixtures.pipeline("source: {store: s}\nsinks:\n  - type: stdout\n    colour: red\n")
            Issue.record("no error")
        } catch let error as TributaryError {
            #expect(error.description == "test.yml:4: sinks[0].colour: unknown key 'colour'; allowed keys: type, name, on_error, dead_letter, batch_size, format")
        }
    }

    @Test func missingFileIsNamed() throws {
        #expect(throws: TributaryError.self) { try PipelineFile(contentsOf: URL(fileURLWithPath: "/nonexistent/p.yml")) }
    }

    @Test func shippedPipelinesParse() throws {
        let directory = PipelineFixtures.repositoryRoot.appendingPathComponent("pipelines")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".yml") }.sorted()
        #expect(files == ["audit-archive.yml", "nats-fanout.yml", "postgres-mirror.yml", "redis-cache.yml", "search-index.yml", "webhook.yml"])
        for file in files {
            let pipeline = try PipelineFile(contentsOf: directory.appendingPathComponent(file), environment: ["TRIBUTARY_STORE": "/s.sqlite", "TRIBUTARY_OUT": "/o", "WEBHOOK_URL": "http://127.0.0.1:9/h",
                                                                                                                                    "POSTGRES_URL": "postgres://u@127.0.0.1:9/d"],
                                          sinks: PipelineFixtures.sinks)
            #expect(pipeline.source.store == "/s.sqlite")
        }
    }
}
