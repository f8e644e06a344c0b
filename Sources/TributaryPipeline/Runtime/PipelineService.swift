import Foundation
import ServiceLifecycle
import Tributary

/// Runs pipelines until stopped: a thin loop that calls each runner's
/// ``PipelineRunner/runOnce()`` while there is work, waits for new commits when there is none
/// (``waitForNewCommits(_:after:stop:)``), and on a stop request (or, with `once`, when
/// every pipeline has caught up) checkpoints and closes every runner. A swift-service-lifecycle
/// `Service`: in a `ServiceGroup`, graceful shutdown (SIGTERM, SIGINT) requests the stop.
///
/// ```swift
/// let service = PipelineService(runners: runners, stop: StopSignal(), once: false)
/// let group = ServiceGroup(services: [service], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
/// try await group.run()
/// ```
// @unchecked Sendable: the ServiceGroup calls run() once; the runners are used only from it.
public final class PipelineService: Service, @unchecked Sendable {
    /// The runners, one per pipeline.
    public let runners: [PipelineRunner]
    /// The stop request the loop watches.
    public let stop: StopSignal

    /// Whether ``run()`` stops once every pipeline has caught up.
    public let once: Bool

    /// A service running `runners` until `stop` is requested (or, with `once`, until caught up).
    public init(runners: [PipelineRunner], stop: StopSignal, once: Bool = false) {
        self.runners = runners
        self.stop = stop
        self.once = once
    }

    /// The `Service` entry point: ``run(once:)`` with graceful shutdown requesting the stop.
    public func run() async throws {
        let stop = self.stop
        try await withGracefulShutdownHandler {
            try await run(once: once)
        } onGracefulShutdown: {
            stop.request()
        }
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
    /// requested. It sleeps on each store's `PersistentStoreCoordinator/remoteChanges`, so
    /// any writer's commit wakes it at once.
    ///
    /// ```swift
    /// let token = try coordinator.currentPersistentHistoryToken()
    /// try await runner.runOnce()
    /// try await PipelineService.waitForNewCommits([coordinator], after: [token], stop: stop)
    /// ```
    public static func waitForNewCommits(_ coordinators: [PersistentStoreCoordinator], after tokens: [PersistentHistoryToken], stop: StopSignal) async throws {
        // One stream of wakes: each store's remote changes (inotify and in-process posts,
        // listening before the first look) and a check of the stop signal every 100 ms.
        let (wakes, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        var listeners: [Task<Void, Never>] = []
        for coordinator in coordinators {
            var changes = coordinator.remoteChanges.makeAsyncIterator()
            listeners.append(Task { while await changes.next() != nil { wake.yield() } })
        }
        listeners.append(Task {
            while !Task.isCancelled && !stop.isRequested { try? await Task.sleep(for: .milliseconds(100)) }
            wake.yield()
        })
        defer { for listener in listeners { listener.cancel() } }
        var iterator = wakes.makeAsyncIterator()
        while !stop.isRequested {
            for (coordinator, token) in zip(coordinators, tokens) where try coordinator.currentPersistentHistoryToken() > token { return }
            guard await iterator.next() != nil else { return }
            try Task.checkCancellation()
        }
    }
}
