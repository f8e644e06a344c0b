import Foundation
import TributaryTestSupport
import Testing
@testable import Tributary
@testable import TributaryStreams

/// Replay rebuilds the source, to the end or to a point in time, idempotently.
@Suite struct ReplayTests {
    /// Changes to objects of the first workload (so later history rewrites earlier rows).
    static func laterChanges(_ source: PersistentStoreCoordinator) throws {
        try source.execute(BatchUpdateRequest(entityName: "Post", propertiesToUpdate: ["content": "rewritten"]))
        try source.execute(BatchDeleteRequest(entityName: "Tag", predicate: try StorePredicate(format: "name == %@", "sqlite")))
        try source.execute(BatchInsertRequest(entityName: "Tag", objects: [["name": "late", "color": "blue"]]))
    }

    static func export(_ source: PersistentStoreCoordinator, to stream: URL, snapshot: Bool = false, segmentRecords: Int = 25) throws -> StreamExporter {
        var options = ExportOptions()
        options.maximumSegmentRecords = segmentRecords
        options.recordsPerFrame = 8
        options.snapshot = snapshot
        let exporter = try StreamExporter(coordinator: source, directory: stream, options: options)
        _ = try exporter.exportOnce()
        return exporter
    }

    @Test func replayToATokenInTheMiddleEqualsTheSourceAtThatToken() throws {
        let temp = TemporaryDirectory()
        let source = try StreamFixtures.source(in: temp.url)
        try StreamFixtures.workload(source)
        let middle = try source.currentPersistentHistoryToken()
        let atMiddle = try StreamFixtures.dump(source)
        #expect(atMiddle.count > 10 && atMiddle.contains { $0.contains("tags=[Tag/p") } && atMiddle.contains { $0.hasPrefix("Attachment/") })
        try Self.laterChanges(source)
        try StreamFixtures.workload(source, prefix: "b-")
        let stream = temp.child("stream")
        _ = try Self.export(source, to: stream)

        let replayer = try StreamReplayer(directory: stream)
        let partial = try replayer.openTarget(at: temp.child("partial.sqlite"))
        let summary = try replayer.replay(into: partial, until: .token(middle))
        #expect(summary.last?.token == middle.value)
        #expect(try StreamFixtures.dump(partial) == atMiddle)

        let full = try replayer.openTarget(at: temp.child("full.sqlite"))
        _ = try replayer.replay(into: full)
        #expect(try StreamFixtures.dump(full) == StreamFixtures.dump(source))
        #expect(try StreamFixtures.dump(full) != atMiddle)

        // Continuing the partial replay reaches the end.
        _ = try replayer.replay(into: partial, resume: true)
        #expect(try StreamFixtures.dump(partial) == StreamFixtures.dump(source))
    }

    /// A transaction that swaps two unique values is refused with where and why: replay writes
    /// each change on its own, so the first update finds the other row still holding its new
    /// value. Found by a hostile probe: the error named neither the change nor its position,
    /// and advised updating the existing row instead.
    @Test func aSwapOfUniqueValuesIsRefusedWithWhereAndWhy() throws {
        let temp = TemporaryDirectory()
        let source = try StreamFixtures.source(in: temp.url)
        var tags = BatchInsertRequest(entityName: "Tag", objects: [["name": "a"], ["name": "b"]])
        tags.resultType = .objectIDs
        let ids = try source.execute(tags).objectIDs
        // One transaction, as another program's would be (a context cannot write a swap: its
        // save writes each row's final value, and the first finds the other's still there).
        try source.persistentStores[0].write { db in
            try db.execute("UPDATE Tag SET name = 'swap' WHERE name = 'a'; UPDATE Tag SET name = 'a' WHERE name = 'b'; UPDATE Tag SET name = 'b' WHERE name = 'swap'")
        }
        #expect(try source.fetch(FetchRequest(entityName: "Tag")).map { $0["name"] } == [.string("b"), .string("a")])
        #expect(ids.count == 2)
        let stream = temp.child("stream")
        _ = try Self.export(source, to: stream)
        let replayer = try StreamReplayer(directory: stream)
        let target = try replayer.openTarget(at: temp.child("copy.sqlite"))
        let error = try #require(throws: TributaryError.self) { try replayer.replay(into: target) }
        #expect(error.message.contains("the update of Tag/p") && error.message.contains(" at 2.") && error.message.contains("swap"), "\(error.message)")
    }

    @Test func replayingTwiceGivesTheSameStore() throws {
        let temp = TemporaryDirectory()
        let source = try StreamFixtures.source(in: temp.url)
        try StreamFixtures.workload(source)
        try Self.laterChanges(source)
        let stream = temp.child("stream")
        _ = try Self.export(source, to: stream)
        let replayer = try StreamReplayer(directory: stream)
        let targetURL = temp.child("copy.sqlite")
        let target = try replayer.openTarget(at: targetURL)
        _ = try replayer.replay(into: target)
        let once = try StreamFixtures.dump(target)
        #expect(once == (try StreamFixtures.dump(source)))
        // From the start again, into the same store (no saved position): nothing changes.
        try FileManager.default.removeItem(at: StreamReplayer.positionFile(for: targetURL))
        _ = try replayer.replay(into: target, resume: true)
        #expect(try StreamFixtures.dump(target) == once)
        // A non-empty target is refused without resume.
        let error = try #require(throws: TributaryError.self) { try replayer.replay(into: target) }
        #expect(error.message.contains("not empty"))
    }

    @Test func damagedStreamIsRefusedBeforeAnyWrite() throws {
        let temp = TemporaryDirectory()
        let source = try StreamFixtures.source(in: temp.url)
        try StreamFixtures.workload(source)
        let stream = temp.child("stream")
        _ = try Self.export(source, to: stream, segmentRecords: 10)
        let manifest = try #require(try StreamManifest.load(from: stream))
        let url = stream.appendingPathComponent(manifest.segments[2].name)
        var bytes = [UInt8](try Data(contentsOf: url))
        bytes[bytes.count / 2] ^= 0xFF
        try Data(bytes).write(to: url)
        let verifyError = try #require(throws: TributaryError.self) { try StreamVerifier(directory: stream).verify() }
        let replayer = try StreamReplayer(directory: stream)
        let target = try replayer.openTarget(at: temp.child("copy.sqlite"))
        let replayError = try #require(throws: TributaryError.self) { try replayer.replay(into: target) }
        #expect(replayError == verifyError)
        #expect(try StreamFixtures.dump(target).isEmpty)
        // The CLI: one line, non-zero, no store created.
        let result = try TributaryProcess.run(["replay", stream.path, "--into", temp.child("cli.sqlite").path])
        #expect(result.status != 0 && result.stderr.contains(manifest.segments[2].name))
        #expect(!FileManager.default.fileExists(atPath: temp.child("cli.sqlite").path))
    }

    @Test func snapshotAndChangesAfterPruningEqualTheSource() throws {
        let temp = TemporaryDirectory()
        let source = try StreamFixtures.source(in: temp.url)
        try StreamFixtures.workload(source)
        try Self.laterChanges(source)
        _ = try source.deleteHistory(.deleteHistory(before: try source.currentPersistentHistoryToken()))
        #expect(try source.oldestKeptHistoryToken().value > 0)

        // Without a snapshot, the exporter says what was lost and how to get it.
        let plain = try StreamExporter(coordinator: source, directory: temp.child("plain"), options: { var o = ExportOptions(); o.consumerName = "plain"; return o }())
        #expect(plain.warnings.contains { $0.contains("pruned") && $0.contains("--snapshot") })

        let stream = temp.child("stream")
        let exporter = try Self.export(source, to: stream, snapshot: true, segmentRecords: 7)
        #expect(exporter.warnings.isEmpty)
        try StreamFixtures.workload(source, prefix: "c-")
        try source.execute(BatchUpdateRequest(entityName: "Tag", propertiesToUpdate: ["color": "green"]))
        _ = try exporter.exportOnce()
        let manifest = try #require(try StreamManifest.load(from: stream))
        #expect(manifest.snapshot?.complete == true && manifest.segments.first?.first.isSnapshot == true)
        #expect(try source.historyConsumer(named: "export").token == source.currentPersistentHistoryToken())

        let replayer = try StreamReplayer(directory: stream)
        let target = try replayer.openTarget(at: temp.child("copy.sqlite"))
        _ = try replayer.replay(into: target)
        #expect(try StreamFixtures.dump(target) == StreamFixtures.dump(source))
    }

    @Test func replayToADateEqualsTheSourceThen() throws {
        let temp = TemporaryDirectory()
        let source = try StreamFixtures.source(in: temp.url)
        try StreamFixtures.workload(source)
        Thread.sleep(forTimeInterval: 0.05)
        let middle = Date()
        let atMiddle = try StreamFixtures.dump(source)
        Thread.sleep(forTimeInterval: 0.05)
        try Self.laterChanges(source)
        let stream = temp.child("stream")
        _ = try Self.export(source, to: stream)
        let result = try TributaryProcess.run(["replay", stream.path, "--into", temp.child("copy.sqlite").path, "--until", ISO8601.string(from: middle)])
        #expect(result.status == 0, "\(result.stderr)")
        let copy = PersistentStoreCoordinator()
        try copy.addPersistentStore(with: PersistentStoreDescription(url: temp.child("copy.sqlite")))
        #expect(try StreamFixtures.dump(copy) == atMiddle)
        let again = try TributaryProcess.run(["replay", stream.path, "--into", temp.child("copy.sqlite").path])
        #expect(again.status != 0 && again.stderr.contains("not empty") && again.stderr.split(separator: "\n").count == 1)
    }

    @Test func untilParsesTokensAndDates() throws {
        #expect(try ReplayLimit(parsing: "42-6f9619ff") == .token(try PersistentHistoryToken(parsing: "42-6f9619ff")))
        #expect(try ReplayLimit(parsing: "2024-05-01T12:00:00Z") == .date(Date(timeIntervalSince1970: 1_714_564_800)))
        #expect(throws: TributaryError.self) { try ReplayLimit(parsing: "yesterday") }
    }
}

/// Values another program stored in a date attribute's column that are no date Tributary
/// stores are replayed as given. Before, replay read text that is not ISO 8601 as seconds
/// ('0x10' as 16.0, 'nan' and 'inf' refused as dates), and refused seconds outside the years
/// ISO 8601 writes (1e12, an infinity), which `verify` did not count either.
@Suite struct ReplayForeignDateTests {
    @Test func textAndSecondsNoDateHoldsAreReplayedAsGiven() throws {
        let temp = TemporaryDirectory()
        let source = try StreamFixtures.source(in: temp.url)
        let path = temp.child("source.sqlite").path
        let odd = ["'nan'", "'0x10'", "1e12", "1e999", "-1e999", "'yesterday'", "'2024-05-01T12:00:00Z'"]
        let sql = odd.enumerated().map { "INSERT INTO Post (externalID, title, createdAt) VALUES ('x-\($0.offset)', 't', \($0.element));" }.joined(separator: "\n")
        let shell = try TributaryProcess.run([path], stdin: ".timeout 5000\n" + sql, executable: URL(fileURLWithPath: "/usr/bin/sqlite3"))
        #expect(shell.status == 0, "\(shell.stderr)")
        let stream = temp.child("stream")
        _ = try ReplayTests.export(source, to: stream)
        let summary = try StreamVerifier(directory: stream).verify()
        #expect(summary.valueMismatches == 6, "\(summary.firstValueMismatch ?? "")")
        let replayer = try StreamReplayer(directory: stream)
        let copy = try replayer.openTarget(at: temp.child("copy.sqlite"))
        _ = try replayer.replay(into: copy)
        copy.persistentStores.forEach(copy.remove)
        let query = "SELECT externalID, quote(createdAt), typeof(createdAt) FROM Post ORDER BY externalID;"
        func rows(_ file: String) throws -> String {
            try TributaryProcess.run([temp.child(file).path], stdin: query, executable: URL(fileURLWithPath: "/usr/bin/sqlite3")).stdout
        }
        let expected = try rows("source.sqlite")
        #expect(expected.contains("x-1|'0x10'|text") && expected.contains("x-2|1000000000000.0|real") && expected.contains("x-3|Inf|real"), "\(expected)")
        // Every row as the source holds it, but the one date Tributary stores, in its own form (seconds).
        let replayed = try rows("copy.sqlite")
        #expect(replayed.split(separator: "\n").dropLast() == expected.split(separator: "\n").dropLast(), "\(replayed)")
        #expect(replayed.split(separator: "\n").last == "x-6|1714564800.0|real", "\(replayed)")
    }
}
