import Foundation
import ServiceLifecycle
import Tributary

/// Runs pipelines until stopped: one thin loop per pipeline, each in a task of its own, that
/// calls its runner's ``PipelineRunner/runOnce()`` while there is work, waits for new commits
/// when there is none (``waitForNewCommits(_:after:stop:)``), and on a stop request (or, with
/// `once`, when it has caught up) checkpoints and closes the runner. A swift-service-lifecycle
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

    /// Where each pipeline's state is kept (in memory and in its source store), if anywhere.
    public let board: PipelineStatusBoard?

    /// A service running `runners` until `stop` is requested (or, with `once`, until caught
    /// up), keeping each pipeline's state on `board` when one is given.
    public init(runners: [PipelineRunner], stop: StopSignal, once: Bool = false, board: PipelineStatusBoard? = nil) {
        self.runners = runners
        self.stop = stop
        self.once = once
        self.board = board
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
    ///
    /// Every pipeline's consumer is registered before any pipeline takes a step, so none
    /// prunes history another has yet to read; and no pipeline prunes while one that starts
    /// with a snapshot has not registered its consumer. Each pipeline then runs in a task of
    /// its own, so a sink that is away delays only its own pipeline. When a pipeline fails,
    /// the others stop too (they checkpoint and close), except with `once`, where they finish
    /// their work; the first failure is thrown.
    public func run(once: Bool) async throws {
        let statuses = runners.map { PipelineStatusWriter(board: board, runner: $0) }
        for (runner, status) in zip(runners, statuses) {
            let reported = runner.events
            let logger = runner.logger
            runner.events = { event in
                reported(event)
                status.record(event)
                event.log(to: logger)   // the service logs; the runner only reports
            }
        }
        for runner in runners {
            if let warning = try runner.registerConsumer() { runner.events(.warning(warning)) }
        }
        let consumers = runners.map { ($0.coordinator, $0.pipeline.source.consumer) }
        let pruneAllowed: @Sendable () -> Bool = { consumers.allSatisfy { (try? $0.0.historyConsumer(named: $0.1)) != nil } }
        for runner in runners { runner.pruneAllowed = pruneAllowed }
        for status in statuses { status.set(.running) }
        let heartbeat = board.map { board in
            Task {
                while (try? await Task.sleep(for: PipelineStatusBoard.heartbeatInterval)) != nil {
                    try? board.beat()   // a busy store: the next beat writes it
                }
            }
        }
        defer { heartbeat?.cancel() }
        let stop = self.stop
        let failure = await withTaskGroup(of: (any Error)?.self) { group in
            for (runner, status) in zip(runners.map(OwnedRunner.init), statuses) {
                group.addTask {
                    do {
                        try await Self.drive(runner.runner, once: once, stop: stop)
                        status.set(.stopped)
                        return nil
                    } catch {
                        status.set(.failed, lastError: (error as? TributaryError)?.message ?? "\(error)")
                        if !once { stop.request() }
                        return error
                    }
                }
            }
            var first: (any Error)?
            for await error in group where first == nil { first = error }
            return first
        }
        if let failure { throw failure }
        // A pipeline that prunes may have finished before another of the run had consumed
        // its history: prune again now that every one has committed.
        for runner in runners { try runner.pruneConsumedHistory() }
    }

    /// A runner handed to the one task that drives it.
    // @unchecked Sendable: each runner is used by exactly one task, started once by run(once:).
    private struct OwnedRunner: @unchecked Sendable {
        let runner: PipelineRunner
    }

    /// Steps one pipeline until stopped (or caught up, with `once`), waiting for commits to
    /// its store while it has none to read, then checkpoints and closes it.
    /// A store locked past its busy timeout does not end it: the step is taken again.
    private static func drive(_ runner: PipelineRunner, once: Bool, stop: StopSignal) async throws {
        var busy: (attempts: Int, since: Date)?
        do {
            while !stop.isRequested {
                do {
                    let token = try runner.coordinator.currentPersistentHistoryToken()
                    let step = try await runner.runOnce()
                    if busy != nil { runner.events(.recovered) }
                    busy = nil
                    if step.interrupted { break }
                    if step.caughtUp {
                        if once { break }
                        try await waitForNewCommits([runner.coordinator], after: [token], stop: stop)
                    }
                } catch let error as TributaryError where error.code == .storeLocked {
                    let attempts = (busy?.attempts ?? 0) + 1, since = busy?.since ?? runner.now()
                    busy = (attempts, since)
                    try await runner.storeStayedLocked(error, attempt: attempts, since: since)
                }
            }
        } catch {
            try? await runner.finish()
            throw error
        }
        try await runner.finish()
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
        let stores = zip(coordinators, tokens).map { ($0, $1) }
        try await stop.cancellingOnRequest {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (coordinator, token) in stores {
                    group.addTask {
                        var waiter = CommitWaiter(coordinator)
                        _ = try await waiter.waitForCommit(after: token)
                    }
                }
                try await group.next()
                group.cancelAll()
            }
        }
    }
}
