import Foundation
import Synchronization

/// A request to stop, set by graceful shutdown (SIGTERM, SIGINT through the ServiceGroup)
/// or by a caller, read by the pipeline loop between steps and by retry waits. A wait for
/// commits is cancelled by it at once (``cancellingOnRequest(_:)``), without polling.
///
/// ```swift
/// let stop = StopSignal()
/// runner.shouldStop = { stop.isRequested }
/// stop.request()
/// ```
public final class StopSignal: Sendable {
    private struct State {
        var requested = false
        var onRequest: [UUID: @Sendable () -> Void] = [:]
    }
    private let state = Mutex(State())

    /// A signal not yet requested.
    public init() {}

    /// Whether a stop was requested.
    public var isRequested: Bool { state.withLock { $0.requested } }

    /// Requests a stop, cancelling the waits in hand.
    public func request() {
        let actions = state.withLock { state -> [@Sendable () -> Void] in
            guard !state.requested else { return [] }
            state.requested = true
            defer { state.onRequest = [:] }
            return Array(state.onRequest.values)
        }
        for action in actions { action() }
    }

    /// Runs `body` in a task that a stop request cancels; returns nil when it was stopped
    /// that way, or at once when the stop was requested before; else its result.
    ///
    /// ```swift
    /// try await stop.cancellingOnRequest { try await waiter.waitForCommit(after: token) }
    /// ```
    @discardableResult
    public func cancellingOnRequest<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T? {
        guard !isRequested else { return nil }
        let task = Task { try await body() }
        let id = UUID()
        let registered = state.withLock { state -> Bool in
            guard !state.requested else { return false }
            state.onRequest[id] = { task.cancel() }
            return true
        }
        if !registered { task.cancel() }
        defer { _ = state.withLock { $0.onRequest.removeValue(forKey: id) } }
        do {
            return try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
        } catch is CancellationError where isRequested {
            return nil
        }
    }
}
