import Foundation
import Synchronization

/// A request to stop, set by graceful shutdown (SIGTERM, SIGINT through the ServiceGroup)
/// or by a caller, read by the pipeline loop between steps and by retry waits.
///
/// ```swift
/// let stop = StopSignal()
/// runner.shouldStop = { stop.isRequested }
/// stop.request()
/// ```
public final class StopSignal: Sendable {
    private let requested = Mutex(false)

    /// A signal not yet requested.
    public init() {}

    /// Whether a stop was requested.
    public var isRequested: Bool { requested.withLock { $0 } }

    /// Requests a stop.
    public func request() { requested.withLock { $0 = true } }
}
