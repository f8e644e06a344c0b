import Foundation
import Synchronization
import TributaryPipeline

/// How `--follow` commands end: SIGINT and SIGTERM cancel the task doing the work, which
/// finishes the batch in hand (cancellation is seen only while waiting for the next commit),
/// flushes and returns, so the command exits 0.
enum Interruption {
    /// Runs `body` in a task that SIGINT and SIGTERM cancel, and waits for it.
    static func cancellingOnSignals(_ body: @escaping @Sendable () async throws -> Void) async throws {
        let task = Task { try await body() }
        let sources = onSignals { task.cancel() }
        defer { for source in sources { source.cancel() } }
        try await task.value
    }

    /// Runs `body` (work that reads `stop` between batches) with SIGINT and SIGTERM requesting
    /// the stop while it runs.
    static func stoppingOnSignals<T>(_ stop: StopSignal, _ body: () throws -> T) rethrows -> T {
        let sources = onSignals { stop.request() }
        defer { for source in sources { source.cancel() } }
        return try body()
    }

    /// Calls `handler` on SIGINT and SIGTERM (which no longer end the process) until the
    /// sources returned are cancelled.
    private static func onSignals(_ handler: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            return source
        }
    }
}
