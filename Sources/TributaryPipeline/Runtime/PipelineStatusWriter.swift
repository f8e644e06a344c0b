import Foundation
import Tributary

/// One pipeline's states on a ``PipelineStatusBoard`` (nothing without a board), set from its
/// runner's events: a failure to retry makes it retrying with the error, a recovery running.
struct PipelineStatusWriter: Sendable {
    let board: PipelineStatusBoard?
    let pipeline: String
    let consumer: String
    let coordinator: PersistentStoreCoordinator

    init(board: PipelineStatusBoard?, runner: PipelineRunner) {
        self.board = board
        self.pipeline = runner.pipeline.name
        self.consumer = runner.pipeline.source.consumer
        self.coordinator = runner.coordinator
    }

    /// Sets the state. The status is for people and health checks: a store too busy to take
    /// it does not stop the pipeline (the state is kept in memory and the next heartbeat
    /// writes it).
    func set(_ state: PipelineStatus.State, lastError: String? = nil) {
        try? board?.set(pipeline, consumer: consumer, coordinator: coordinator, state: state, lastError: lastError)
    }

    func record(_ event: PipelineRunner.Event) {
        switch event {
        case .delivered, .deadLettered, .warning, .schemaDelivered: break
        case .failed(let failure): set(.retrying, lastError: "sink \(failure.sink): \(failure.error.message)")
        case .recovered: set(.running)
        case .storeBusy(let error, _): set(.retrying, lastError: "store: \(error.message)")
        }
    }
}
