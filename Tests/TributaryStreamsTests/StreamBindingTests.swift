import Foundation
import TributaryTestSupport
import Testing
import Tributary
@testable import TributaryStreams

/// A stream directory never silently misses changes: it is bound to its own consumer, it
/// continues from what it holds even when its consumer was moved, it refuses time windows,
/// a verifier finds positions a stream skipped, and a snapshot cut short is reported and
/// not replayed (issue 18, items 6–8).
@Suite struct StreamBindingTests {
    static func allPositions(_ source: PersistentStoreCoordinator) throws -> [StreamPosition] {
        try source.fetchHistoryChanges(.fetchHistory(after: nil)).map { StreamPosition(token: $0.token.value, index: $0.index) }
    }

    @Test func aDirectoryStreamRefusesATimeWindow() throws {
        let temp = TemporaryDirectory()
        let source = try StreamFixtures.source(in: temp.url)
        try StreamFixtures.workload(source)
        for window in [(Date(timeIntervalSince1970: 0), nil), (nil, Date())] as [(Date?, Date?)] {
            var options = ExportOptions()
            options.filter.since = window.0
            options.filter.until = window.1
            let error = try #require(throws: TributaryError.self) { try StreamExporter(coordinator: source, directory: temp.child("windowed"), options: options) }
            #expect(error.message.contains("cannot be limited to a time window"))
        }
        #expect(!FileManager.default.fileExists(atPath: temp.child("windowed").path))
        #expect(try source.historyConsumers().isEmpty)
    }

    @Test func eachStreamHasItsOwnConsumer() throws {
        let temp = TemporaryDirectory()
        let source = try StreamFixtures.source(in: temp.url)
        try StreamFixtures.workload(source, rounds: 1)
        let first = temp.child("first"), second = temp.child("second")
        _ = try StreamExporter(coordinator: source, directory: first, options: ExportOptions()).exportOnce()
        #expect(try StreamManifest.load(from: first)?.consumer == "export")
        // A second stream with the same (default) consumer would move the first one's position.
        let shared = try #require(throws: TributaryError.self) { try StreamExporter(coordinator: source, directory: second, options: ExportOptions()) }
        #expect(shared.message.contains("consumer 'export' already exists"))
        var own = ExportOptions()
        own.consumerName = "second"
        _ = try StreamExporter(coordinator: source, directory: second, options: own).exportOnce()
        let wrong = try #require(throws: TributaryError.self) { try StreamExporter(coordinator: source, directory: first, options: own) }
        #expect(wrong.message.contains("kept by consumer 'export', not 'second'"))

        try StreamFixtures.workload(source, rounds: 2, prefix: "more-")
        _ = try StreamExporter(coordinator: source, directory: first, options: ExportOptions()).exportOnce()
        _ = try StreamExporter(coordinator: source, directory: second, options: own).exportOnce()
        let expected = try Self.allPositions(source)
        for stream in [first, second] {
            _ = try StreamVerifier(directory: stream).verify()
            #expect(try ExportTests.positions(stream) == expected)
        }
    }

    @Test func aStreamWhoseConsumerWasMovedStillGetsEveryChange() throws {
        let temp = TemporaryDirectory()
        let source = try StreamFixtures.source(in: temp.url)
        try StreamFixtures.workload(source, rounds: 1)
        let stream = temp.child("stream")
        _ = try StreamExporter(coordinator: source, directory: stream, options: ExportOptions()).exportOnce()
        try StreamFixtures.workload(source, rounds: 1, prefix: "more-")
        try source.commitHistoryConsumer("export", through: try source.currentPersistentHistoryToken())
        _ = try StreamExporter(coordinator: source, directory: stream, options: ExportOptions()).exportOnce()
        _ = try StreamVerifier(directory: stream).verify()
        #expect(try ExportTests.positions(stream) == (try Self.allPositions(source)))
    }

    @Test func verifyFindsAStreamThatSkippedChanges() throws {
        let temp = TemporaryDirectory()
        let source = try StreamFixtures.source(in: temp.url)
        try StreamFixtures.workload(source, rounds: 1)
        let stream = temp.child("stream")
        _ = try StreamExporter(coordinator: source, directory: stream, options: ExportOptions()).exportOnce()
        let skipped = try source.currentPersistentHistoryToken().value + 1
        try StreamFixtures.workload(source, rounds: 1, prefix: "more-")
        // What an exporter that trusted a moved consumer wrote: its manifest claims the
        // next transaction, which it never exported.
        var manifest = try #require(try StreamManifest.load(from: stream))
        manifest.completeThrough = skipped
        try manifest.save(to: stream)
        _ = try StreamExporter(coordinator: source, directory: stream, options: ExportOptions()).exportOnce()
        let error = try #require(throws: TributaryError.self) { try StreamVerifier(directory: stream).verify() }
        #expect(error.code == .damagedStream)
        #expect(error.message.contains("the stream skips from \(skipped - 1)."))

        // A filtered stream leaves changes out on purpose: no gap is reported.
        var posts = ExportOptions()
        posts.consumerName = "posts"
        posts.filter.entities = ["Post"]
        let filtered = temp.child("posts")
        _ = try StreamExporter(coordinator: source, directory: filtered, options: posts).exportOnce()
        #expect(try StreamManifest.load(from: filtered)?.filtered == true)
        #expect(try StreamVerifier(directory: filtered).verify().records > 0)
    }

    @Test func aSnapshotCutShortIsReportedAndNotReplayed() throws {
        let temp = TemporaryDirectory()
        let source = try StreamFixtures.source(in: temp.url)
        for batch in 0..<30 {
            try source.execute(BatchInsertRequest(entityName: "Tag", objects: (0..<1000).map { ["name": .string("tag-\(batch)-\($0)")] }))
        }
        let store = temp.child("source.sqlite").path
        let stream = temp.child("stream")
        let arguments = ["export", store, "--to", stream.path, "--snapshot", "--segment-records", "100", "--frame-records", "16"]
        let process = try TributaryProcess.start(arguments, environment: [:], output: temp.child("export.log"))
        // Killed once the manifest lists snapshot segments, before the snapshot is whole.
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning, Date() < deadline {
            if let manifest = try? StreamManifest.load(from: stream), manifest.snapshot?.complete == false, manifest.segments.count >= 2 { break }
            usleep(2_000)
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let cut = try #require(try StreamManifest.load(from: stream))
        #expect(cut.snapshot?.complete == false, "the export finished before it was killed")

        let verify = try TributaryProcess.run(["verify", stream.path])
        #expect(verify.status != 0 && verify.stderrLines.count == 1)
        #expect(verify.stderr.contains("is incomplete"), "\(verify.stderr)")
        let replay = try TributaryProcess.run(["replay", stream.path, "--into", temp.child("replica.sqlite").path])
        #expect(replay.status != 0 && replay.stderr.contains("is incomplete"), "\(replay.stderr)")

        // The export run again starts the stream over and makes it whole.
        let again = try TributaryProcess.run(arguments)
        #expect(again.status == 0, "\(again.stderr)")
        let summary = try StreamVerifier(directory: stream).verify()
        #expect(summary.manifest.snapshot?.complete == true && summary.manifest.snapshot?.objects == 30_000)
        #expect(summary.records == 30_000)
    }
}
