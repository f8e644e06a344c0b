import Foundation
import Synchronization

/// How `--follow` commands end: SIGINT and SIGTERM cancel the task doing the work, which
/// finishes the batch in hand (cancellation is seen only while waiting for the next commit),
/// flushes and returns, so the command exits 0.
enum Interruption {
    /// Runs `body` in a task that SIGINT and SIGTERM cancel, and waits for it.
    static func cancellingOnSignals(_ body: @escaping @Sendable () async throws -> Void) async throws {
        let task = Task { try await body() }
        let sources = [SIGINT, SIGTERM].map { number -> any DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { task.cancel() }
            source.resume()
            return source
        }
        defer { for source in sources { source.cancel() } }
        try await task.value
    }
}
