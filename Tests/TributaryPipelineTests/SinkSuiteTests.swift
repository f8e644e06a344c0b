import Foundation
import TributaryTestSupport
import Testing
import Tributary
import TributaryPipeline
import TributaryStreams
import TributaryHTTPSink

/// One sink under test: a way to make it over the same downstream (as a restarted process
/// would), and the downstream's effect as lines to compare.
struct SinkUnderTest {
    let make: () -> any Sink
    let effect: () throws -> [String]
}

/// The shared sink suite, run for every sink: a clean delivery, then a delivery "crashed"
/// after a checkpoint and part of the next batch and resumed by a new sink from its durable
/// position, must leave the same effect downstream; checkpoints cover filtered-out records;
/// durable positions never fall behind what was checkpointed; a capture gap record after the
/// records is taken in its place (a sink may ignore it).
enum SinkSuite {
    static let storeID = UUID(uuidString: "0B6F0000-0000-4000-8000-000000000001")!
    static let model = try! ManagedObjectModel(yamlFile: PipelineFixtures.repositoryRoot.appendingPathComponent("examples/blog/model.yml"))
    static let context = SinkContext(pipeline: "suite", storeID: storeID, model: model)

    /// Inserts of 12 posts, updates of some, deletes of others, over 9 transactions.
    static let records: [StreamRecord] = {
        var records: [StreamRecord] = []
        var token: Int64 = 1
        func add(_ op: StreamOperation, _ key: Int64, _ properties: [PropertyChange], index: Int) {
            records.append(StreamRecord(position: StreamPosition(token: token, index: index), storeID: storeID, timestamp: Date(timeIntervalSince1970: 1_700_000_000 + Double(token)),
                                        author: "suite", contextName: nil, operation: op, objectID: ObjectID(storeID: storeID, entityName: "Post", primaryKey: key), properties: properties))
        }
        for batch in 0..<3 {
            for i in 0..<4 {
                let key = Int64(batch * 4 + i + 1)
                add(.create, key, [PropertyChange(name: "title", after: .string("Post \(key) about swift")), PropertyChange(name: "content", after: .string("Body \(key) linux"))], index: i)
            }
            token += 1
        }
        for round in 0..<3 {
            for (i, key) in [Int64(round + 1), Int64(round + 5)].enumerated() {
                add(.update, key, [PropertyChange(name: "title", before: .string("Post \(key) about swift"), after: .string("Edited \(round) sqlite"))], index: i)
            }
            token += 1
            add(.delete, Int64(12 - round), [PropertyChange(name: "title", before: .string("Post \(12 - round) about swift"))], index: 0)
            token += 1
        }
        // Each transaction's last record carries its chain hash, as the runner leaves it.
        for index in records.indices where index == records.count - 1 || records[index + 1].position.token != records[index].position.token {
            records[index].chainHash = chainHash(records[index].position.token)
        }
        return records
    }()

    /// The made-up chain hash of transaction `token`.
    static func chainHash(_ token: Int64) -> [UInt8] { Array(repeating: UInt8(token), count: 32) }

    /// The chain point of the last transaction of the records.
    static var lastChainPoint: StreamManifest.ChainPoint {
        StreamManifest.ChainPoint(token: records.last!.position.token, hash: Hex.string(chainHash(records.last!.position.token)))
    }

    /// A capture gap after the records (at the next token).
    static let gap = CaptureGapRecord(position: StreamPosition(token: 10, index: 0), storeID: storeID, timestamp: Date(timeIntervalSince1970: 1_700_000_010),
                                      description: "writes by other programs to Post since token 9 may be missing", entities: ["Post"])

    /// Delivers `chunks` to `sink` (which holds what is at or before `after`) as the runner
    /// does: the capture gap in its place (after the last record), once.
    static func deliver(_ chunks: [[StreamRecord]], after: StreamPosition?, to sink: any Sink) async throws {
        var gapDue = after.map { $0 < gap.position } ?? true
        for chunk in chunks {
            try await sink.deliver(chunk)
            guard gapDue, chunk.last == records.last else { continue }
            try await sink.deliverGap(gap)
            gapDue = false
        }
    }

    static func chunks(after position: StreamPosition?) -> [[StreamRecord]] {
        stride(from: 0, to: records.count, by: 5).compactMap { start in
            let chunk = records[start..<min(records.count, start + 5)].filter { position == nil || $0.position > position! }
            return chunk.isEmpty ? nil : Array(chunk)
        }
    }

    static func run(clean: SinkUnderTest, crashed: SinkUnderTest) async throws {
        // A clean delivery.
        let sink = clean.make()
        let start = try await sink.open(context)
        #expect(start == nil, "a new sink holds nothing")
        try await deliver(chunks(after: nil), after: nil, to: sink)
        let durable = try await sink.checkpoint(through: records.last!.position)
        #expect(durable.map { $0 >= records.last!.position } == true)
        try await sink.close()
        let expected = try clean.effect()
        #expect(!expected.isEmpty)

        // A delivery cut short: a checkpoint after 10 records, 5 more delivered, then the process dies.
        let first = crashed.make()
        _ = try await first.open(context)
        let all = chunks(after: nil)
        try await deliver([all[0], all[1]], after: nil, to: first)
        let checkpointed = try await first.checkpoint(through: all[1].last!.position)
        #expect(checkpointed.map { $0 >= all[1].last!.position } == true)
        try await deliver([all[2]], after: all[1].last!.position, to: first)
        // Restarted: a new sink over the same downstream resumes from its durable position.
        let second = crashed.make()
        let resume = try await second.open(context)
        if let resume { #expect(resume >= all[1].last!.position, "the durable position never falls behind a checkpoint") }
        try await deliver(chunks(after: resume), after: resume, to: second)
        // Records after the last delivered one were filtered out: the checkpoint still covers them.
        let beyond = StreamPosition(token: records.last!.position.token + 5, index: 0)
        let final = try await second.checkpoint(through: beyond)
        #expect(final.map { $0 >= beyond } == true)
        try await second.close()
        #expect(try crashed.effect() == expected, "redelivery after a crash changes nothing downstream")

        // Reopened once more: nothing left to deliver for sinks that keep a position.
        let third = crashed.make()
        let position = try await third.open(context)
        if let position { #expect(position >= records.last!.position) }
        // A sink that keeps a position keeps the chain point of the last transaction it holds whole.
        #expect(third.durableChainPoint == (position == nil ? nil : lastChainPoint), "\(String(describing: third.durableChainPoint))")
        try await third.close()
    }
}

@Suite struct SinkSuiteTests {
    @Test func segments() async throws {
        let dir = TemporaryDirectory()
        func underTest(_ name: String) -> SinkUnderTest {
            let url = dir.url.appendingPathComponent(name)
            return SinkUnderTest(make: { SegmentsSink(name: "segments", directory: url, format: .native) }, effect: {
                let manifest = try #require(try StreamManifest.load(from: url))
                var lines: [String] = []
                for segment in manifest.segments {
                    try SegmentReader(directory: url, segment: segment, format: .native, decoder: ZstdFrameDecoder()).forEachRecord { bytes, _ in
                        lines.append(String(decoding: bytes, as: UTF8.self))
                        return true
                    }
                }
                return lines
            })
        }
        try await SinkSuite.run(clean: underTest("clean"), crashed: underTest("crashed"))
        let result = try TributaryProcess.run(["verify", dir.path("crashed")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("warning: capture gap at 10.0"), "the stream carries the gap: \(result.stderr)")
    }

    @Test func standardOutput() async throws {
        let dir = TemporaryDirectory()
        // Standard output keeps no position: a reader de-duplicates by event ID, and then sees each record once.
        func underTest(_ name: String) throws -> SinkUnderTest {
            let path = dir.path(name)
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            return SinkUnderTest(make: { StandardOutputSink(name: "stdout", format: .cloudevents, descriptor: handle.fileDescriptor) }, effect: {
                _ = handle
                let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
                var seen: [String: String] = [:]
                for line in lines {
                    let json = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                    let id = try #require(json["id"] as? String)
                    if let earlier = seen[id] { #expect(earlier == line, "a redelivered record is the same record") }
                    seen[id] = line
                }
                #expect(Set(seen.keys) == Set(SinkSuite.records.map(\.eventID) + [SinkSuite.gap.eventID]), "the capture gap is printed in its place")
                return seen.keys.sorted().map { seen[$0]! }
            })
        }
        try await SinkSuite.run(clean: try underTest("clean.ndjson"), crashed: try underTest("crashed.ndjson"))
    }

    @Test func fullTextIndex() async throws {
        let dir = TemporaryDirectory()
        let entities = ["Post": ["title", "content"]]
        func underTest(_ name: String) -> SinkUnderTest {
            let path = dir.path(name)
            return SinkUnderTest(make: { FullTextIndexSink(name: "fts", path: path, entities: entities) }, effect: {
                try FullTextIndex(path: path, create: false).documents().map { "\($0.object) \($0.entity) \($0.content)" }
            })
        }
        try await SinkSuite.run(clean: underTest("clean.sqlite"), crashed: underTest("crashed.sqlite"))
        let index = try FullTextIndex(path: dir.path("crashed.sqlite"), create: false)
        #expect(try index.documents().count == 9)
        let hits = try index.search("sqlite", limit: 10)
        #expect(hits.count == 6)
        #expect(hits.allSatisfy { $0.snippet.contains("[sqlite]") })
        #expect(try index.search("swift", limit: 2).count == 2)
    }

    @Test func http() async throws {
        let clean = try TestHTTPServer(), crashed = try TestHTTPServer()
        defer { clean.stop(); crashed.stop() }
        func underTest(_ server: TestHTTPServer) -> SinkUnderTest {
            SinkUnderTest(make: { HTTPSink(name: "http", url: URL(string: server.url)!, bearerTokenEnvironment: "T", environment: ["T": "token-1"]) }, effect: {
                let state = server.state.withLock { $0 }
                #expect(state.authorizations == ["Bearer token-1"])
                #expect(state.recordIDs.count == Set(state.recordIDs).count, "the endpoint saw each record once")
                return state.recordIDs.sorted()
            })
        }
        try await SinkSuite.run(clean: underTest(clean), crashed: underTest(crashed))
        #expect(crashed.state.withLock { $0.keys.values.contains { $0 > 1 } }, "the redelivered batch came with the same idempotency key")
    }
}
