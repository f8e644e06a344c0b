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
                let tokens = try runners.map { try $0.coordinator.currentPersistentHistoryToken() }
                var idle = true
                for runner in runners {
                    let step = try await runner.runOnce()
                    if step.interrupted { break loop }
                    if !step.caughtUp { idle = false }
                    if stop.isRequested { break loop }
                }
                if idle {
                    if once { break }
                    try await Self.waitForNewCommits(runners.map(\.coordinator), after: tokens, stop: stop)
                }
            }
        } catch {
            for runner in runners { try? await runner.finish() }
            throw error
        }
        for runner in runners { try await runner.finish() }
    }

    /// Waits until one of the stores has a commit after its token in `tokens` (taken before
    /// the runners last read, so a commit landing meanwhile is not missed), or a stop is
    /// requested. For now it polls each store's current history token every `interval`
    /// (200 ms); inotify-based remote change notifications will replace the polling here,
    /// and only here.
    ///
    /// ```swift
    /// let token = try coordinator.currentPersistentHistoryToken()
    /// try await runner.runOnce()
    /// try await PipelineService.waitForNewCommits([coordinator], after: [token], stop: stop)
    /// ```
    public static func waitForNewCommits(_ coordinators: [PersistentStoreCoordinator], after tokens: [PersistentHistoryToken], stop: StopSignal,
                                         interval: Duration = .milliseconds(200)) async throws {
        while !stop.isRequested {
            for (coordinator, token) in zip(coordinators, tokens) where try coordinator.currentPersistentHistoryToken() > token { return }
            try await Task.sleep(for: interval)
        }
    }
}
