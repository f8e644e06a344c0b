import Foundation
import Synchronization
import Tributary

/// The statuses of the pipelines a process runs: kept in memory for the health endpoint
/// (``health``) and written to each pipeline's source store (``PipelineStatus/save(in:)``)
/// when a state changes and at every heartbeat, so `tributary status` in another process
/// sees them. ``PipelineService`` sets the states from its runners' events.
///
/// ```swift
/// let board = PipelineStatusBoard()
/// let (healthy, text) = board.health   // what a health endpoint answers (tributary run serves it on /healthz)
/// let service = PipelineService(runners: runners, stop: StopSignal(), board: board)
/// ```
public final class PipelineStatusBoard: Sendable {
    /// How often a running process rewrites its heartbeat.
    public static let heartbeatInterval: Duration = .seconds(5)

    private struct Entry: Sendable {
        var status: PipelineStatus
        let coordinator: PersistentStoreCoordinator
    }

    private let entries = Mutex<[Entry]>([])
    /// Held while writing to the stores, so the newest state is always the last written.
    private let writing = Mutex(())

    /// An empty board.
    public init() {}

    /// The statuses, in the order the pipelines were first set.
    public var statuses: [PipelineStatus] { entries.withLock { $0.map(\.status) } }

    /// Sets `pipeline`'s state and, when it changed (state or error), writes it to its store.
    /// Throws what writing threw; the state in memory is set all the same.
    public func set(_ pipeline: String, consumer: String, coordinator: PersistentStoreCoordinator, state: PipelineStatus.State, lastError: String? = nil) throws {
        let changed = entries.withLock { entries in
            if let index = entries.firstIndex(where: { $0.status.pipeline == pipeline }) {
                guard entries[index].status.state != state || entries[index].status.lastError != lastError else { return false }
                if entries[index].status.state != state { entries[index].status.since = Date() }
                entries[index].status.state = state
                entries[index].status.lastError = lastError
            } else {
                entries.append(Entry(status: PipelineStatus(pipeline: pipeline, consumer: consumer, state: state, lastError: lastError), coordinator: coordinator))
            }
            return true
        }
        if changed { try write { $0.status.pipeline == pipeline } }
    }

    /// Rewrites every pipeline's status with a new heartbeat time. Throws the first failure
    /// (after trying every store).
    public func beat() throws {
        try write { _ in true }
    }

    /// Writes the current status of the pipelines `matching` selects, heartbeat now.
    private func write(_ matching: (Entry) -> Bool) throws {
        try writing.withLock { _ in
            let now = Date()
            let chosen = entries.withLock { entries in
                for index in entries.indices where matching(entries[index]) { entries[index].status.heartbeat = now }
                return entries.filter(matching)
            }
            var failure: (any Error)?
            for entry in chosen {
                do { try entry.status.save(in: entry.coordinator) } catch { failure = failure ?? error }
            }
            if let failure { throw failure }
        }
    }

    /// Whether every pipeline is well (none retrying or failed), and one line a pipeline:
    /// `search-index: running` or `webhook: retrying: sink webhook: connection refused`,
    /// for the health endpoint.
    public var health: (healthy: Bool, text: String) {
        let statuses = self.statuses
        let lines = statuses.map { status in
            "\(status.pipeline): \(status.state.rawValue)" + (status.lastError.map { ": \($0)" } ?? "")
        }
        return (!statuses.contains { $0.state.isFailing }, lines.joined(separator: "\n") + (lines.isEmpty ? "" : "\n"))
    }
}
