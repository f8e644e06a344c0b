import Foundation
import Prometheus
import Synchronization
import Testing
import Tributary
import TributaryPipeline
import TributaryStreams
import TributaryTestSupport
import TributaryRedisSink

/// Reading a Redis server back, and the store's live objects as the Redis sink keeps them.
enum RedisFixtures {
    static func connect(_ url: String) throws -> RedisConnection {
        try RedisConnection(url: URL(string: url)!, password: nil, sink: "test")
    }

    /// Every key's type and contents: `[key: [field: value]]` for hashes, `[key: ["": value]]` for strings.
    static func contents(_ url: String) throws -> [String: [String: String]] {
        let redis = try connect(url)
        guard case .array(let replies) = try redis.command(["KEYS", "*"]) else { return [:] }
        let keys = replies.compactMap(\.text).sorted()
        for key in keys { redis.append(["TYPE", key]) }
        let types = try keys.map { _ in try redis.reply().text ?? "" }
        for (key, type) in zip(keys, types) { redis.append([type == "hash" ? "HGETALL" : "GET", key]) }
        var result: [String: [String: String]] = [:]
        for (key, type) in zip(keys, types) {
            let reply = try redis.reply()
            if type == "hash", case .array(let items) = reply {
                var fields: [String: String] = [:]
                for pair in stride(from: 0, to: items.count - 1, by: 2) { fields[items[pair].text ?? ""] = items[pair + 1].text ?? "" }
                result[key] = fields
            } else {
                result[key] = ["": reply.text ?? "\(reply)"]
            }
        }
        return result
    }

    /// Every key but the checkpoint as one line, sorted: the shared suite's effect.
    static func lines(_ url: String) throws -> [String] {
        try contents(url).filter { !$0.key.hasPrefix("tributary:checkpoint:") }.sorted { $0.key < $1.key }.map { key, fields in
            key + " " + fields.sorted { $0.key < $1.key }.map { $0.key + "=" + $0.value }.joined(separator: " ")
        }
    }

    /// The cached objects (not tombstones or checkpoints), without their `_position`.
    static func objects(_ url: String) throws -> [String: [String: String]] {
        try contents(url).filter { !$0.key.hasSuffix(":deleted") && !$0.key.hasPrefix("tributary:") }.mapValues { $0.filter { $0.key != "_position" } }
    }

    /// The store's live posts as the sink keeps them: `Post:ID` → attribute values as text.
    static func storeObjects(_ store: PersistentStoreCoordinator) throws -> [String: [String: String]] {
        var result: [String: [String: String]] = [:]
        try store.enumerateSnapshot(entities: ["Post"], begin: { _ in }) { object in
            var fields: [String: String] = [:]
            for property in object.properties where !property.isValueExcluded && !property.isMembershipChange {
                if let value = property.after, !value.isNull { fields[property.name] = value.description }
            }
            result["Post:\(object.objectID.primaryKey)"] = fields
        }
        return result
    }

    static func pipeline(name: String, url: String, checkpointRecords: Int = 5_000) -> String {
        """
        name: \(name)
        source:
          store: ${TRIBUTARY_STORE}
          entities: [Post]
        sinks:
          - type: redis
            url: \(url)
            batch_size: 1000
            on_error: stop
        checkpoint: {records: \(checkpointRecords), seconds: 1s}
        retry: {initial: 20ms, max: 200ms}
        """
    }
}

/// The Redis sink against a real redis-server: the shared suite (hash and JSON), the
/// compare-and-set against older redeliveries and deletes, a 100,000-change workload, a
/// `tributary run` killed at random points, and a server killed and restarted during a run.
@Suite(.serialized, .tags(.servers)) struct RedisSinkTests {
    @Test(arguments: [RedisSinkSettings.Format.hash, .json])
    func sharedSinkSuite(format: RedisSinkSettings.Format) async throws {
        let redis = try RedisServer.start()
        defer { redis.stop() }
        func underTest(_ db: Int) -> SinkUnderTest {
            let url = redis.url + "/\(db)"
            return SinkUnderTest(make: { RedisSink(name: "redis", settings: RedisSinkSettings(url: URL(string: url)!, format: format)) },
                                 effect: { try RedisFixtures.lines(url) })
        }
        try await SinkSuite.run(clean: underTest(1), crashed: underTest(2))
        let contents = try RedisFixtures.contents(redis.url + "/2")
        #expect(contents.keys.filter { $0.hasPrefix("Post:") && !$0.hasSuffix(":deleted") }.count == 9)
        #expect(contents.keys.filter { $0.hasSuffix(":deleted") }.sorted() == ["Post:10:deleted", "Post:11:deleted", "Post:12:deleted"])
        #expect(contents["tributary:checkpoint:suite"]?[""] == "14.0", "the checkpoint covers the filtered-out records after the last one")
        switch format {
        case .hash:
            #expect(contents["Post:1"] == ["_position": "4.0", "title": "Edited 0 sqlite", "content": "Body 1 linux"])
        case .json:
            let text = try #require(contents["Post:1"]?[""])
            let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: String])
            #expect(object == ["_position": "4.0", "title": "Edited 0 sqlite", "content": "Body 1 linux"])
        }
    }

    static let storeID = UUID(uuidString: "0B6F0000-0000-4000-8000-000000000002")!

    static func record(_ op: StreamOperation, _ key: Int64, _ token: Int64, _ properties: [String: AttributeValue]) -> StreamRecord {
        StreamRecord(position: StreamPosition(token: token, index: 0), storeID: storeID, timestamp: Date(), author: nil, contextName: nil, operation: op,
                     objectID: ObjectID(storeID: storeID, entityName: "Post", primaryKey: key),
                     properties: properties.sorted { $0.key < $1.key }.map { op == .delete ? PropertyChange(name: $0.key, before: $0.value) : PropertyChange(name: $0.key, after: $0.value) })
    }

    /// A `json` document marks a blob in a text attribute `{"base64":"…"}`, apart from text
    /// and from a binary attribute's bytes, by the model at open and then by each schema
    /// record's. Before, such a blob was written as base64 text, like the text it is not.
    @Test func aJSONDocumentMarksABlobInATextAttribute() async throws {
        let redis = try RedisServer.start()
        defer { redis.stop() }
        func model(coverIsBinary: Bool) throws -> ManagedObjectModel {
            try ManagedObjectModel(entities: [EntityDescription(name: "Post", attributes: [
                AttributeDescription(name: "title", type: .string), AttributeDescription(name: "cover", type: coverIsBinary ? .binary : .string)])])
        }
        let sink = RedisSink(name: "redis", settings: RedisSinkSettings(url: URL(string: redis.url)!, key: "{entity}:{id}", format: .json))
        #expect(try await sink.open(SinkContext(pipeline: "blobs", storeID: Self.storeID, model: try model(coverIsBinary: true))) == nil)
        let blob = AttributeValue.data(Data([0xCA, 0xFE])), bytes = AttributeValue.data(Data([0x00, 0xFF]))
        try await sink.deliver([Self.record(.create, 1, 1, ["title": blob, "cover": bytes])])
        let next = try model(coverIsBinary: false)
        let change = SchemaChange(fromVersion: nil, toVersion: next.versionHash, changes: ["changed Post.cover"], model: next, isDetected: true)
        try await sink.deliverSchema(SchemaRecord(position: StreamPosition(token: 2, index: 0), storeID: Self.storeID, timestamp: Date(), change: change))
        try await sink.deliver([Self.record(.create, 2, 3, ["title": "yv4=", "cover": bytes])])
        let contents = try RedisFixtures.contents(redis.url)
        func document(_ key: String) throws -> [String: Any] {
            let text = try #require(contents[key]?[""])
            return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        }
        let first = try document("Post:1"), second = try document("Post:2")
        #expect(first["title"] as? [String: String] == ["base64": "yv4="] && first["cover"] as? String == "AP8=", "\(first)")
        #expect(second["title"] as? String == "yv4=" && second["cover"] as? [String: String] == ["base64": "AP8="], "by the schema record's model: \(second)")
        try await sink.close()
    }

    @Test(arguments: [RedisSinkSettings.Format.hash, .json])
    func olderRedeliveryLeavesTheNewerValueAndDeletesStayDeleted(format: RedisSinkSettings.Format) async throws {
        let redis = try RedisServer.start()
        defer { redis.stop() }
        let settings = RedisSinkSettings(url: URL(string: redis.url)!, key: "cache:{store}:{entity}:{id}", format: format, channel: "changes", ttl: 3_600)
        let context = SinkContext(pipeline: "cas", storeID: Self.storeID, model: SinkSuite.model)
        let subscriber = try RedisFixtures.connect(redis.url)
        _ = try subscriber.command(["SUBSCRIBE", "changes"])
        let sink = RedisSink(name: "redis", settings: settings)
        #expect(try await sink.open(context) == nil)
        try await sink.deliver([Self.record(.create, 1, 1, ["title": "A", "content": "one"]), Self.record(.update, 1, 3, ["title": "C"]),
                                Self.record(.create, 2, 4, ["title": "D", "content": .null]), Self.record(.delete, 2, 5, ["title": "D"]),
                                Self.record(.update, 3, 6, ["title": "not cached"])])
        // Redelivered out of order, by another process that started from an older position.
        let stale = RedisSink(name: "redis", settings: settings)
        _ = try await stale.open(context)
        _ = try RedisFixtures.connect(redis.url).command(["SCRIPT", "FLUSH"])   // the server forgot the script: EVAL takes over
        try await stale.deliver([Self.record(.update, 1, 2, ["title": "B", "content": "older"]), Self.record(.create, 2, 4, ["title": "D"]),
                                 Self.record(.update, 2, 4, ["title": "D2"])])
        let prefix = "cache:" + Self.storeID.lowercasedString + ":Post:"
        let contents = try RedisFixtures.contents(redis.url)
        #expect(Set(contents.keys) == [prefix + "1", prefix + "2:deleted", "tributary:checkpoint:cas"])
        #expect(contents[prefix + "2:deleted"] == ["": "5.0"])
        #expect(contents["tributary:checkpoint:cas"] == ["": "6.0"], "the checkpoint does not move back either")
        let expected = ["_position": "3.0", "title": "C", "content": "one"]
        switch format {
        case .hash: #expect(contents[prefix + "1"] == expected)
        case .json:
            let text = try #require(contents[prefix + "1"]?[""])
            #expect(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: String] == expected)
        }
        let ttl = try RedisFixtures.connect(redis.url).command(["TTL", prefix + "1"])
        #expect(ttl.integerValue.map { $0 > 3_000 && $0 <= 3_600 } == true, "ttl: \(ttl)")
        // Each applied change was published once, in order; the stale ones were not.
        var published: [String] = []
        for _ in 0..<4 {
            guard case .array(let message) = try subscriber.reply(), message.count == 3 else { break }
            published.append(message[2].text ?? "")
        }
        #expect(published == [prefix + "1", prefix + "1", prefix + "2", prefix + "2"])
        try await sink.close()
        try await stale.close()
    }

    @Test func aRefusedCallMovesTheCheckpointBackBeforeIt() async throws {
        let redis = try RedisServer.start()
        defer { redis.stop() }
        let admin = try RedisFixtures.connect(redis.url)
        #expect(try admin.command(["SET", "Post:3", "not a hash"]) == .status("OK"))
        let context = SinkContext(pipeline: "refused", storeID: Self.storeID, model: SinkSuite.model)
        let sink = RedisSink(name: "redis", settings: RedisSinkSettings(url: URL(string: redis.url)!))
        sink.recordsPerCall = 2
        #expect(try await sink.open(context) == nil)
        // Post:3's update finds a string where a hash belongs: the second call (Post:3, Post:4) fails.
        let records = (1...6).map { Self.record($0 == 3 ? .update : .create, Int64($0), Int64($0), ["title": .string("T\($0)")]) }
        let error = try await #require(throws: TributaryError.self) { try await sink.deliver(records) }
        #expect(error.code == .sinkRejected)
        #expect(error.message.contains("WRONGTYPE"), "\(error)")
        // The third call (Post:5 and Post:6) ran after the refused second one: the checkpoint is back after Post:2.
        #expect(try admin.command(["GET", "tributary:checkpoint:refused"]).text == "2.0")
        #expect(try admin.command(["HGET", "Post:6", "title"]).text == "T6")
        let restarted = RedisSink(name: "redis", settings: RedisSinkSettings(url: URL(string: redis.url)!))
        #expect(try await restarted.open(context) == StreamPosition(token: 2, index: 0), "a restart delivers the refused records again")
        #expect(try admin.command(["DEL", "Post:3"]) == .integer(1))
        try await restarted.deliver(Array(records.dropFirst(2)))
        #expect(try admin.command(["HGET", "Post:4", "title"]).text == "T4")
        #expect(try admin.command(["GET", "tributary:checkpoint:refused"]).text == "6.0")
        try await restarted.close()
    }

    @Test func theShippedPipelineCachesTheStoreInTheServerOfREDISURL() async throws {
        let redis = try RedisServer.start()
        defer { redis.stop() }
        let dir = TemporaryDirectory()
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        let ids = try PipelineFixtures.insertPosts(store, count: 500, perTransaction: 100)
        let environment = ["TRIBUTARY_STORE": dir.path("s.sqlite"), "REDIS_URL": redis.url + "/5"]
        let file = PipelineFixtures.repositoryRoot.appendingPathComponent("pipelines/redis-cache.yml").path
        var result = try TributaryProcess.run(["run", file, "--once"], environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try RedisFixtures.objects(redis.url + "/5") == RedisFixtures.storeObjects(store), "the snapshot of the posts already in the store")
        try PipelineFixtures.editPosts(store, Array(ids.prefix(100)), round: 1)
        result = try TributaryProcess.run(["run", file, "--once"], environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        let cached = try RedisFixtures.objects(redis.url + "/5")
        #expect(cached.count == 480)
        #expect(cached == (try RedisFixtures.storeObjects(store)), "then the changes")
        #expect(try RedisFixtures.connect(redis.url + "/5").command(["EXISTS", "tributary:checkpoint:redis-cache"]) == .integer(1))
    }

    @Test func aHundredThousandChangesEndWithRedisEqualToTheStore() async throws {
        let redis = try RedisServer.start()
        defer { redis.stop() }
        let dir = TemporaryDirectory()
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        let ids = try PipelineFixtures.insertPosts(store, count: 52_000, perTransaction: 1_000)
        for round in 0..<5 {
            try PipelineFixtures.editPosts(store, Array(ids[(round * 8_000)..<((round + 1) * 8_000)]), round: round)
        }
        #expect(try store.historySize().changes == 100_000)
        let pipeline = try PipelineFixtures.pipeline(RedisFixtures.pipeline(name: "bulk", url: redis.url), environment: ["TRIBUTARY_STORE": dir.path("s.sqlite")])
        let runner = try PipelineRunner(pipeline: pipeline, coordinator: store, sinks: pipeline.sinks.map { PipelineRunner.makeSink($0) })
        while try await !runner.runOnce().caughtUp {}
        try await runner.finish()
        let cached = try RedisFixtures.objects(redis.url)
        let live = try RedisFixtures.storeObjects(store)
        #expect(live.count == 52_000 - 5 * 1_600)
        #expect(cached.count == live.count)
        #expect(cached == live, "every key and field value equals the store's")
        #expect(try store.historyConsumer(named: "bulk").lagTransactions == 0)
    }

    @Test func killedAtRandomPointsAndRestartedLeavesNoStaleValue() async throws {
        let redis = try RedisServer.start()
        defer { redis.stop() }
        let dir = TemporaryDirectory()
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        var ids = try PipelineFixtures.insertPosts(store, count: 3_000, perTransaction: 100)
        let environment = ["TRIBUTARY_STORE": dir.path("s.sqlite")]
        let file = dir.path("crash.yml")
        try RedisFixtures.pipeline(name: "crash", url: redis.url, checkpointRecords: 500).write(toFile: file, atomically: true, encoding: .utf8)
        var killedWithWorkLeft = 0
        let probe = try RedisFixtures.connect(redis.url)
        // Six rounds of 2,000 inserts, 500 updates and 100 deletes, each before a run killed at a random point.
        for round in 0..<6 {
            ids += try PipelineFixtures.insertPosts(store, count: 2_000, from: 100_000 + round * 2_000, perTransaction: 20)
            try PipelineFixtures.editPosts(store, Array(ids.prefix(500)), round: round)
            ids.removeFirst(500)
            // Even rounds: killed early; odd rounds: once the sink's checkpoint has passed a random token of the round's work.
            let checkpoint: () -> Int64? = {
                (try? probe.command(["GET", "tributary:checkpoint:crash"]).text).flatMap { try? StreamPosition(parsing: $0).token }
            }
            let before = checkpoint() ?? 0
            let process = try TributaryProcess.start(["run", file], environment: environment, output: dir.url.appendingPathComponent("run-\(round).log"))
            if CrashPoint.killAtRandomPoint(process, round: round, from: before, to: try store.currentPersistentHistoryToken().value, progress: checkpoint) { killedWithWorkLeft += 1 }
            #expect(process.terminationReason == .uncaughtSignal)
        }
        #expect(killedWithWorkLeft >= 2, "kills landed while the pipeline had work left (\(killedWithWorkLeft) of 6)")
        let finish = try TributaryProcess.run(["run", file, "--once"], environment: environment)
        #expect(finish.status == 0, "\(finish.stderr)")
        let live = try RedisFixtures.storeObjects(store)
        #expect(live.count == 15_000 - 6 * 100)
        #expect(try RedisFixtures.objects(redis.url) == live, "no stale value, no missing or extra key")
        let checkpoint = try RedisFixtures.connect(redis.url).command(["GET", "tributary:checkpoint:crash"]).text
        #expect(try StreamPosition(parsing: checkpoint ?? "").token >= store.historyConsumer(named: "crash").token.value)
    }

    @Test func aServerKilledDuringARunIsRetriedAndCaughtUpWithTheLagInTheMetrics() async throws {
        let redis = try RedisServer.start(appendOnly: true)
        defer { redis.stop() }
        let dir = TemporaryDirectory()
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        let ids = try PipelineFixtures.insertPosts(store, count: 300, perTransaction: 100)
        let yaml = RedisFixtures.pipeline(name: "outage", url: redis.url).replacingOccurrences(of: "batch_size: 1000", with: "batch_size: 50")
        let pipeline = try PipelineFixtures.pipeline(yaml, environment: ["TRIBUTARY_STORE": dir.path("s.sqlite")])
        let runner = try PipelineRunner(pipeline: pipeline, coordinator: store, sinks: pipeline.sinks.map { PipelineRunner.makeSink($0) })
        let registry = PrometheusCollectorRegistry()
        runner.metrics = PipelineMetrics(pipeline: "outage", sinks: ["redis"], factory: PrometheusMetricsFactory(registry: registry))
        while try await !runner.runOnce().caughtUp {}
        #expect(try RedisFixtures.objects(redis.url).count == 300)

        redis.kill()
        try PipelineFixtures.insertPosts(store, count: 200, from: 1_000, perTransaction: 100)
        try PipelineFixtures.editPosts(store, Array(ids.prefix(50)), round: 0)
        let lagsWhileDown = Mutex<[Double]>([])
        runner.sleep = { _ in
            let lag = PipelineMetricsTests.value(registry.emitToString(), #"tributary_pipeline_lag_changes{pipeline="outage"}"#) ?? -1
            let count = lagsWhileDown.withLock { $0.append(lag); return $0.count }
            if count == 3 { try redis.restart() }
        }
        while try await !runner.runOnce().caughtUp {}
        try await runner.finish()
        // Three failed attempts while down (a server still loading its data after the restart may add one).
        let lags = lagsWhileDown.withLock { $0 }
        #expect(lags.count >= 3 && lags.allSatisfy { $0 == 260 }, "the lag shows in the metrics while Redis is down: \(lags)")
        let text = registry.emitToString()
        #expect(PipelineMetricsTests.value(text, #"tributary_pipeline_retries_total{pipeline="outage",sink="redis"}"#) == Double(lags.count))
        #expect(PipelineMetricsTests.value(text, #"tributary_pipeline_lag_changes{pipeline="outage"}"#) == 0)
        #expect(try RedisFixtures.objects(redis.url) == RedisFixtures.storeObjects(store), "caught up once the server returned, nothing lost")
    }

    /// A pipeline started while its server is down waits for it (retrying the sink's open
    /// with backoff) and then delivers everything.
    @Test func aPipelineStartedBeforeItsServerWaitsForIt() async throws {
        let redis = try RedisServer.start()
        defer { redis.stop() }
        redis.kill()
        let dir = TemporaryDirectory()
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        _ = try PipelineFixtures.insertPosts(store, count: 120, perTransaction: 40)
        let pipeline = try PipelineFixtures.pipeline(RedisFixtures.pipeline(name: "late", url: redis.url), environment: ["TRIBUTARY_STORE": dir.path("s.sqlite")])
        let runner = try PipelineRunner(pipeline: pipeline, coordinator: store, sinks: pipeline.sinks.map { PipelineRunner.makeSink($0) })
        let reports = Mutex<[String]>([])
        runner.events = { event in if case .failed = event { reports.withLock { $0.append(event.description) } } }
        let waits = Mutex(0)
        runner.sleep = { _ in
            if waits.withLock({ $0 += 1; return $0 }) == 2 { try redis.restart() }
        }
        while try await !runner.runOnce().caughtUp {}
        try await runner.finish()
        let lines = reports.withLock { $0 }
        #expect(lines.count >= 2 && lines.allSatisfy { $0.contains("open attempt") && $0.contains("cannot connect to Redis") }, "\(lines)")
        #expect(try RedisFixtures.objects(redis.url) == RedisFixtures.storeObjects(store))
    }
}

extension RedisReply {
    var integerValue: Int64? { if case .integer(let value) = self { return value } else { return nil } }
}
