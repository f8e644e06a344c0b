import Foundation
import TributaryTestSupport
import Testing
import Tributary
@testable import TributaryStreams

/// The exporter: resumes without duplicates, commits its consumer only after the manifest,
/// removes leftovers, applies filters and column exclusion, refuses a mismatched directory.
@Suite struct ExportTests {
    static func positions(_ stream: URL) throws -> [StreamPosition] {
        let manifest = try #require(try StreamManifest.load(from: stream))
        var positions: [StreamPosition] = []
        try manifest.forEachRecord(in: stream) { _, position in
            positions.append(position)
            return true
        }
        return positions
    }

    static func historyPositions(_ source: PersistentStoreCoordinator) throws -> [StreamPosition] {
        try source.fetchHistoryChanges(.fetchHistory(after: nil)).map { StreamPosition(token: $0.token.value, index: $0.index) }
    }

    @Test func passesContinueWhereTheLastEndedAndCommitTheConsumer() throws {
        let temp = TemporaryDirectory()
        let source = try StreamFixtures.source(in: temp.url)
        try StreamFixtures.workload(source)
        let stream = temp.child("stream")
        var options = ExportOptions()
        options.maximumSegmentRecords = 10
        let first = try StreamExporter(coordinator: source, directory: stream, options: options).exportOnce()
        #expect(first.records == (try Self.historyPositions(source)).count)
        #expect(try source.historyConsumer(named: "export").token == source.currentPersistentHistoryToken())
        // Nothing new: nothing written.
        #expect(try StreamExporter(coordinator: source, directory: stream, options: options).exportOnce().records == 0)
        try StreamFixtures.workload(source, prefix: "x-")
        let second = try StreamExporter(coordinator: source, directory: stream, options: options).exportOnce()
        #expect(first.records + second.records == (try Self.historyPositions(source)).count)
        #expect(try Self.positions(stream) == Self.historyPositions(source))
        // The consumer lets prune --consumed free what was exported.
        let pruned = try source.deleteHistory(.deleteConsumedHistory())
        #expect(pruned.prunedThrough == (try source.currentPersistentHistoryToken().value))
    }

    @Test func leftoversOfACrashAreRemovedAndTheirRecordsWrittenAgain() throws {
        let temp = TemporaryDirectory()
        let source = try StreamFixtures.source(in: temp.url)
        try StreamFixtures.workload(source)
        let stream = temp.child("stream")
        var options = ExportOptions()
        options.maximumSegmentRecords = 10
        _ = try StreamExporter(coordinator: source, directory: stream, options: options).exportOnce()
        // A crash after a segment was renamed but before the manifest listed it, and one mid-segment;
        // the consumer was not committed for those records.
        var manifest = try #require(try StreamManifest.load(from: stream))
        let unlisted = manifest.segments.removeLast()
        manifest.completeThrough = unlisted.previous!.token - 1
        try manifest.save(to: stream)
        try source.commitHistoryConsumer("export", through: PersistentHistoryToken(value: manifest.completeThrough, storeID: source.persistentStores[0].identifier))
        try Data("partial".utf8).write(to: stream.appendingPathComponent(SegmentWriter.temporaryName))
        let exporter = try StreamExporter(coordinator: source, directory: stream, options: options)
        #expect(!FileManager.default.fileExists(atPath: stream.appendingPathComponent(SegmentWriter.temporaryName).path))
        #expect(!FileManager.default.fileExists(atPath: stream.appendingPathComponent(unlisted.name).path))
        let summary = try exporter.exportOnce()
        #expect(summary.records == unlisted.records)
        #expect(try Self.positions(stream) == Self.historyPositions(source))
        _ = try StreamVerifier(directory: stream).verify()
    }

    @Test func filtersAndExcludedPropertiesApply() throws {
        let temp = TemporaryDirectory()
        let source = try StreamFixtures.source(in: temp.url)
        try StreamFixtures.workload(source)
        let stream = temp.child("stream")
        var options = ExportOptions()
        options.filter.entities = ["Post"]
        options.filter.changeTypes = [.update]
        options.excludedProperties = ["Post.content", "title"]
        options.format = .cloudevents
        _ = try StreamExporter(coordinator: source, directory: stream, options: options).exportOnce()
        let manifest = try #require(try StreamManifest.load(from: stream))
        var types: Set<String> = []
        for segment in manifest.segments {
            try SegmentReader(directory: stream, segment: segment, format: .cloudevents, decoder: try ZstdFrameDecoder()).forEachRecord { line, _ in
                let text = String(decoding: line, as: UTF8.self)
                guard case .object(let event) = try JSONValue.parse(text), case .string(let type)? = event["type"] else { return false }
                types.insert(type)
                #expect(!text.contains("\"title\"") && !text.contains("\"content\""))
                return true
            }
        }
        #expect(types == ["tributary.Post.update"])
        #expect(try source.historyConsumer(named: "export").token == source.currentPersistentHistoryToken())
    }

    @Test func aDirectoryOfAnotherStoreOrFormatIsRefused() throws {
        let temp = TemporaryDirectory()
        let source = try StreamFixtures.source(in: temp.url)
        try StreamFixtures.workload(source)
        let stream = temp.child("stream")
        _ = try StreamExporter(coordinator: source, directory: stream, options: ExportOptions()).exportOnce()
        var debezium = ExportOptions()
        debezium.format = .debezium
        let formatError = try #require(throws: TributaryError.self) { try StreamExporter(coordinator: source, directory: stream, options: debezium) }
        #expect(formatError.description.contains("--format native"))
        let other = try StreamFixtures.source(in: temp.url, name: "other.sqlite")
        let storeError = try #require(throws: TributaryError.self) { try StreamExporter(coordinator: other, directory: stream, options: ExportOptions()) }
        #expect(storeError.message.contains("is of store"))
    }

    @Test func followKeepsExportingAsCommitsArrive() throws {
        let temp = TemporaryDirectory()
        let source = try StreamFixtures.source(in: temp.url)
        try StreamFixtures.workload(source)
        let stream = temp.child("stream")
        let process = Process()
        process.executableURL = TributaryProcess.binary
        process.arguments = ["export", temp.child("source.sqlite").path, "--to", stream.path, "--follow"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate(); process.waitUntilExit() } }
        func waitForAll() throws -> Bool {
            let expected = try Self.historyPositions(source)
            for _ in 0..<150 {
                if let manifest = try? StreamManifest.load(from: stream), manifest.last == expected.last { return true }
                Thread.sleep(forTimeInterval: 0.1)
            }
            return false
        }
        #expect(try waitForAll())
        try StreamFixtures.workload(source, prefix: "later-")
        #expect(try waitForAll())
        #expect(process.isRunning)
        process.terminate()
        process.waitUntilExit()
        #expect(try Self.positions(stream) == Self.historyPositions(source))
    }

    @Test func standardOutputExportPrintsNDJSON() throws {
        let temp = TemporaryDirectory()
        let source = try StreamFixtures.source(in: temp.url)
        try StreamFixtures.workload(source)
        let path = temp.child("source.sqlite").path
        let result = try TributaryProcess.run(["export", path, "--to", "-", "--format", "debezium", "--entity", "Tag"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == (try source.fetchHistoryChanges(.fetchHistory(withFilter: { var f = HistoryFilter(); f.entities = ["Tag"]; return f }())).count))
        for line in lines {
            guard case .object(let event) = try JSONValue.parse(String(line)), case .object(let s)? = event["source"] else { Issue.record("bad line"); continue }
            #expect(s["table"] == .string("Tag"))
        }
        let bad = try TributaryProcess.run(["export", path, "--to", "-", "--format", "avro"])
        #expect(bad.status != 0 && bad.stderr.contains("unknown format 'avro'") && bad.stdout.isEmpty)
    }
}
