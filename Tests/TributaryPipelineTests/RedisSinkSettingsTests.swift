import Foundation
import Testing
import Tributary
@testable import TributaryPipeline
import TributaryStreams
import TributaryTestSupport
@testable import TributaryRedisSink

/// The `type: redis` settings: the example pipeline reads, bad settings fail with one line
/// naming file, line and key, and the password comes from the environment or a file (AUTH).
@Suite(.tags(.servers)) struct RedisSinkSettingsTests {
    @Test func theExamplePipelineReads() throws {
        let url = PipelineFixtures.repositoryRoot.appendingPathComponent("pipelines/redis-cache.yml")
        let pipeline = try PipelineFile(contentsOf: url, environment: ["REDIS_URL": "redis://10.0.0.5:6380/3", "TRIBUTARY_STORE": "blog.sqlite"], sinks: PipelineFixtures.sinks)
        #expect(pipeline.name == "redis-cache")
        #expect(pipeline.source.store == "blog.sqlite")
        let settings = try #require(pipeline.sinks[0].configuration as? RedisSinkSettings)
        #expect(settings == RedisSinkSettings(url: URL(string: "redis://10.0.0.5:6380/3")!, key: "{entity}:{id}", format: .hash, channel: "tributary-invalidations"))
        #expect(pipeline.sinks[0].batchSize == 1000)
    }

    @Test func settingsAndDefaults() throws {
        let yaml = "source: {store: s}\nsinks:\n  - type: redis\n    password_file: /run/secrets/redis\n    key: \"c:{store}:{entity}:{id}\"\n    format: json\n    ttl: 2h\n"
        let pipeline = try PipelineFixtures.pipeline(yaml, environment: ["REDIS_URL": "redis://127.0.0.1:7000"])
        let settings = try #require(pipeline.sinks[0].configuration as? RedisSinkSettings)
        #expect(settings == RedisSinkSettings(url: URL(string: "redis://127.0.0.1:7000")!, passwordFile: "/run/secrets/redis", key: "c:{store}:{entity}:{id}", format: .json, ttl: 7_200))
    }

    @Test func keyTemplates() {
        let record = SinkSuite.records[0]
        let store = SinkSuite.storeID.lowercasedString
        #expect(RedisSink.key(for: record, template: "{entity}:{id}") == "Post:1")
        #expect(RedisSink.key(for: record, template: "cache:{store}:{entity}:{id}:v2") == "cache:\(store):Post:1:v2")
        #expect(RedisSink.key(for: record, template: "{id}{id}-{entity}") == "11-Post")
        #expect(RedisSink.checkpointKey(pipeline: "p") == "tributary:checkpoint:p")
    }

    @Test(arguments: [
        ("    url: redis://u:secret@127.0.0.1:6379\n", "test.yml:4: sinks[0].url", "credentials"),
        ("    url: http://127.0.0.1:6379\n", "test.yml:4: sinks[0].url", "not a redis:// URL"),
        ("    url: redis://127.0.0.1:6379/x\n", "test.yml:4: sinks[0].url", "not a database number"),
        ("    password: hunter2\n", "test.yml:4: sinks[0].password", "credentials are not written"),
        ("    key: \"{entity}\"\n", "test.yml:4: sinks[0].key", "needs {id}"),
        ("    key: \"{entity}:{pk}\"\n", "test.yml:4: sinks[0].key", "needs {id}"),
        ("    format: xml\n", "test.yml:4: sinks[0].format", "unknown format 'xml'"),
        ("    ttl: soon\n", "test.yml:4: sinks[0].ttl", "not a whole number of seconds"),
        ("    password_env: A\n    password_file: /x\n", "test.yml:5: sinks[0].password_file", "not both"),
        ("", "test.yml:3: sinks[0].url", "REDIS_URL is not set"),
    ])
    func badSettingsFailWithOneLine(_ line: String, _ location: String, _ message: String) throws {
        let yaml = "source: {store: s}\nsinks:\n  - type: redis\n" + line
        let error = try #require(throws: TributaryError.self) { try PipelineFixtures.pipeline(yaml, environment: line.isEmpty ? [:] : ["REDIS_URL": "redis://127.0.0.1:6379"]) }
        #expect(error.location == location, "\(error)")
        #expect(error.message.contains(message), "\(error)")
        #expect(!error.description.contains("hunter2") && !error.description.contains("u:secret"))
    }

    @Test func thePasswordComesFromTheEnvironmentOrAFile() async throws {
        let redis = try RedisServer.start()
        defer { redis.stop() }
        _ = try RedisFixtures.connect(redis.url).command(["CONFIG", "SET", "requirepass", "s3cret-pass"])
        let context = SinkContext(pipeline: "auth", storeID: SinkSuite.storeID, model: SinkSuite.model)
        let url = URL(string: redis.url + "/4")!
        let sink = RedisSink(name: "redis", settings: RedisSinkSettings(url: url, passwordEnvironment: "REDIS_PASSWORD"), environment: ["REDIS_PASSWORD": "s3cret-pass"])
        #expect(try await sink.open(context) == nil)
        try await sink.deliver(Array(SinkSuite.records.prefix(3)))
        try await sink.close()
        let dir = TemporaryDirectory()
        try "s3cret-pass\n".write(toFile: dir.path("password"), atomically: true, encoding: .utf8)
        let fromFile = RedisSink(name: "redis", settings: RedisSinkSettings(url: url, passwordFile: dir.path("password")))
        #expect(try await fromFile.open(context) == SinkSuite.records[2].position)
        try await fromFile.close()
        let wrong = RedisSink(name: "redis", settings: RedisSinkSettings(url: url, passwordEnvironment: "REDIS_PASSWORD"), environment: ["REDIS_PASSWORD": "bad-pass-123"])
        let error = try await #require(throws: TributaryError.self) { try await wrong.open(context) }
        #expect(error.message.contains("refused the password"))
        #expect(!error.description.contains("bad-pass-123") && !error.description.contains("s3cret"))
        let missing = RedisSink(name: "redis", settings: RedisSinkSettings(url: url, passwordEnvironment: "REDIS_PASSWORD"), environment: [:])
        await #expect(throws: TributaryError.self) { try await missing.open(context) }
        // Without a password again, so the harness can shut the server down.
        let admin = try RedisConnection(url: url, password: "s3cret-pass", sink: "test")
        #expect(try admin.command(["CONFIG", "SET", "requirepass", ""]) == .status("OK"))
    }
}

/// The protocol form the Redis sink writes its arguments in.
@Suite struct RedisArgumentsTests {
    @Test func argumentsAreBulkStringsWithTheirLengths() {
        var arguments = RedisArguments()
        arguments.add("Post:1")
        arguments.add("")
        for number in [0, 7, 42, -42, 1_000_000_007, Int.max, Int.min] { arguments.add(number) }
        Array("é".utf8).withUnsafeBufferPointer { arguments.add($0) }
        #expect(arguments.count == 10)
        let expected = "$6\r\nPost:1\r\n$0\r\n\r\n$1\r\n0\r\n$1\r\n7\r\n$2\r\n42\r\n$3\r\n-42\r\n$10\r\n1000000007\r\n"
            + "$19\r\n9223372036854775807\r\n$20\r\n-9223372036854775808\r\n$2\r\né\r\n"
        #expect(String(decoding: arguments.bytes, as: UTF8.self) == expected)
    }

    @Test func digitsAsStringWritesThem() {
        for number in [0, 9, 10, 99, 100, -1, -10, 123_456_789, Int.max, Int.min] {
            var bytes: [UInt8] = []
            RedisArguments.appendDigits(number, to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == String(number))
        }
    }
}
