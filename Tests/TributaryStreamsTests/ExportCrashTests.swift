import Foundation
import TributaryTestSupport
import Testing
import Tributary
@testable import TributaryStreams

/// The `tributary export` process killed with SIGKILL at random points ends, after restarts,
/// with every change exactly once and in order.
@Suite struct ExportCrashTests {
    /// A deterministic generator, so a failure can be reproduced.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test func killedExporterEndsWithEveryChangeOnceAndInOrder() throws {
        let temp = TemporaryDirectory()
        let source = try StreamFixtures.source(in: temp.url)
        // 100,000 changes: half before the first of 50 runs killed at random points, the rest
        // added between kills (so every run has work to be killed in): 392 transactions of 250
        // inserts, then updates of 2,000 rows.
        var batch = 0
        func insert(_ transactions: Int) throws {
            for _ in 0..<transactions {
                try source.execute(BatchInsertRequest(entityName: "Tag", objects: (0..<250).map { ["name": .string("tag-\(batch)-\($0)")] }))
                batch += 1
            }
        }
        try insert(200)
        let store = temp.child("source.sqlite").path
        let stream = temp.child("stream")
        let arguments = ["export", store, "--to", stream.path, "--segment-records", "300", "--frame-records", "16"]
        var random = SplitMix(state: 20_261_123)
        var killed = 0
        for round in 0..<50 {
            if round < 48 { try insert(4) }
            if round == 48 {
                for r in 0..<8 {
                    var update = BatchUpdateRequest(entityName: "Tag", propertiesToUpdate: ["color": .string("c\(r)")])
                    update.predicate = try StorePredicate(format: "name BEGINSWITH %@", .string("tag-\(r)-"))
                    try source.execute(update)
                }
            }
            let process = Process()
            process.executableURL = TributaryProcess.binary
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            Thread.sleep(forTimeInterval: Double.random(in: 0.01...0.2, using: &random))
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                killed += 1
            }
            process.waitUntilExit()
        }
        let expected = try source.fetchHistoryChanges(.fetchHistory(after: nil)).map { StreamPosition(token: $0.token.value, index: $0.index) }
        #expect(expected.count == 100_000)
        #expect(killed >= 20, "kills that landed while the exporter ran: \(killed) of 50")
        let final = try TributaryProcess.run(arguments)
        #expect(final.status == 0, "\(final.stderr)")
        _ = try StreamVerifier(directory: stream).verify()
        #expect(try ExportTests.positions(stream) == expected)
        #expect(try source.historyConsumer(named: "export").token == source.currentPersistentHistoryToken())
        #expect(!FileManager.default.fileExists(atPath: stream.appendingPathComponent(SegmentWriter.temporaryName).path))
    }
}
