import Foundation
import Tributary

/// Runs pipelines until stopped: a thin loop that calls each runner's
/// ``PipelineRunner/runOnce()`` while there is work, waits for new commits when there is none
/// (``waitForNewCommits(_:stop:interval:)``), and on a stop request (or, with `once`, when
/// every pipeline has caught up) checkpoints and closes every runner.
///
/// ```swift
/// let stop = StopSignal()
/// stop.installHandlers()
/// try await PipelineService(runners: runners, stop: stop).run(once: false)
/// ```
public final class PipelineService {
    /// The runners, one per pipeline.
    public let runners: [PipelineRunner]
    /// The stop request the loop watches.
    public let stop: StopSignal

    /// A service running `runners` until `stop` is requested.
    public init(runners: [PipelineRunner], stop: StopSignal) {
        self.runners = runners
        self.stop = stop
    }

    /// Runs until stopped (or caught up, with `once`), then checkpoints and closes every runner.
    public func run(once: Bool) async throws {
        do {
            loop: while !stop.isRequested {
                var idle = true
                for runner in runners {
                    let step = try await runner.runOnce()
                    if step.interrupted { break loop }
                    if !step.caughtUp { idle = false }
                    if stop.isRequested { break loop }
                }
                if idle {
                    if once { break }
                    try await Self.waitForNewCommits(runners.map(\.coordinator), stop: stop)
                }
            }
        } catch {
            for runner in runners { try? await runner.finish() }
            throw error
        }
        for runner in runners { try await runner.finish() }
    }

    /// Waits until one of the stores has a commit after its current token, or a stop is
    /// requested. For now it polls each store's current history token every `interval`
    /// (200 ms); inotify-based remote change notifications will replace the polling here,
    /// and only here.
    ///
    /// ```swift
    /// try await PipelineService.waitForNewCommits([coordinator], stop: stop)
    /// ```
    public static func waitForNewCommits(_ coordinators: [PersistentStoreCoordinator], stop: StopSignal, interval: Duration = .milliseconds(200)) async throws {
        let start = try coordinators.map { try $0.currentPersistentHistoryToken() }
        while !stop.isRequested {
            try await Task.sleep(for: interval)
            for (coordinator, token) in zip(coordinators, start) where try coordinator.currentPersistentHistoryToken() > token { return }
        }
    }
}
