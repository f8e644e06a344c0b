import Dispatch
import Foundation
import Synchronization

/// A request to stop, set by SIGTERM or SIGINT (or by a caller), read by the pipeline loop
/// between steps and by retry waits.
///
/// ```swift
/// let stop = StopSignal()
/// stop.installHandlers()            // SIGTERM and SIGINT now request a stop
/// while !stop.isRequested { try await runner.runOnce() }
/// ```
public final class StopSignal: Sendable {
    private let requested = Mutex(false)
    // nonisolated(unsafe): only installHandlers touches it, once, from the command's start-up.
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []

    /// A signal not yet requested.
    public init() {}

    /// Whether a stop was requested.
    public var isRequested: Bool { requested.withLock { $0 } }

    /// Requests a stop.
    public func request() { requested.withLock { $0 = true } }

    /// Makes `signals` (SIGTERM and SIGINT by default) request a stop instead of killing the process.
    public func installHandlers(for signals: [Int32] = [SIGTERM, SIGINT]) {
        for number in signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in request() }
            source.resume()
            Self.sources.append(source)
        }
    }
}
