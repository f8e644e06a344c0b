import Foundation
import Testing
import TributaryTestSupport

/// The soak's writer loop (`Support/WriterLoop.swift`): its stop ends a long-running command
/// however the stop meets it.
@Suite struct WriterLoopTests {
    /// A stop while the loop is starting its command (not yet the running one) ended nothing:
    /// the command ran on and the stop waited for it for good, holding `make test` until
    /// CI's limit. The stop sends SIGTERM again until the command is gone.
    @Test func aStopWhileTheCommandIsStartingEndsIt() throws {
        let dir = TemporaryDirectory()
        let store = dir.url.appendingPathComponent("s.sqlite")
        _ = try PipelineFixtures.store(at: store)
        let writer = TributaryProcess.binary.deletingLastPathComponent().appendingPathComponent("soak-writer")
        for _ in 0..<3 {
            // The command takes a moment to make (as the soak's importer writes its file), and the stop comes then.
            let loop = WriterLoop(name: "context", directory: dir.url, pause: 0...0) { _ in
                usleep(300_000)
                return ([store.path], writer)
            }
            loop.start()
            usleep(100_000)
            let stopped = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                loop.stop(terminating: true)
                stopped.signal()
            }
            #expect(stopped.wait(timeout: .now() + 20) == .success, "the stop returned")
            #expect(loop.tally.failures.isEmpty, "\(loop.tally.failures)")
        }
    }
}
