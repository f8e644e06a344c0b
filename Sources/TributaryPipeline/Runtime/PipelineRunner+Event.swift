import Foundation
import Tributary

extension PipelineRunner {
    /// A sink's failed attempt that the runner will retry.
    public struct Failure: Sendable {
        /// The sink's name.
        public let sink: String
        /// What opening, delivering or checkpointing threw.
        public let error: TributaryError
        /// Failures in a row, from 1.
        public let attempt: Int
    }

    /// What a runner reports to ``PipelineRunner/events`` as it goes: values, not log lines
    /// (``PipelineService`` turns them into the pipeline's status, the CLI into progress).
    public enum Event: Sendable {
        /// A batch of `records` was delivered to `sink`.
        case delivered(sink: String, records: Int)
        /// A sink failed and will be retried.
        case failed(Failure)
        /// The sinks work again after a failure.
        case recovered
        /// The source store stayed locked past its busy timeout (another writer held it for
        /// longer); the runner waits and takes the step again (`attempt`, from 1, in a row).
        case storeBusy(error: TributaryError, attempt: Int)
    }
}
