import Foundation
import Logging
import Tributary

extension PipelineRunner {
    /// A sink's failed attempt: retried, unless the retry policy is spent or the sink refused
    /// the batch (then a dead letter or the pipeline's error follows).
    public struct Failure: Sendable {
        /// What the runner was doing with the sink.
        public enum Step: String, Sendable {
            case open, delivery, checkpoint
        }

        /// The sink's name.
        public let sink: String
        /// What opening, delivering or checkpointing threw.
        public let error: TributaryError
        /// Failures in a row, from 1.
        public let attempt: Int
        /// What failed.
        public let step: Step
        /// The records of a failed delivery.
        public let records: Int?

        /// A failure of `step` on `sink`.
        public init(sink: String, error: TributaryError, attempt: Int, step: Step = .delivery, records: Int? = nil) {
            self.sink = sink
            self.error = error
            self.attempt = attempt
            self.step = step
            self.records = records
        }
    }

    /// What a runner reports to ``PipelineRunner/events`` as it goes: values, not log lines.
    /// The runner logs nothing; ``PipelineService`` turns events into the pipeline's status
    /// and its log (``log(to:)``), the CLI into progress, tests into assertions.
    public enum Event: Sendable, CustomStringConvertible {
        /// A batch of `records` was delivered to `sink`.
        case delivered(sink: String, records: Int)
        /// A sink's attempt failed (see ``Failure``).
        case failed(Failure)
        /// The sinks work again after a failure.
        case recovered
        /// A batch the sink refused was written to the dead letters (`on_error: dead_letter`).
        case deadLettered(sink: String, records: Int, error: TributaryError)
        /// The source store stayed locked past its busy timeout (another writer held it for
        /// longer); the runner waits and takes the step again (`attempt`, from 1, in a row).
        case storeBusy(error: TributaryError, attempt: Int)
        /// Something the user should know that stops nothing (history pruned before a new consumer).
        case warning(String)
        /// `sink` took the schema record at `token` (the source's model changed there).
        case schemaDelivered(sink: String, token: Int64)

        /// The event as one line, as the log says it.
        public var description: String {
            switch self {
            case .delivered(let sink, let records): "sink \(sink): \(records) records delivered"
            case .failed(let failure):
                switch failure.step {
                case .delivery: "sink \(failure.sink): attempt \(failure.attempt) failed: \(failure.error.message)"
                case .open, .checkpoint: "sink \(failure.sink): \(failure.step.rawValue) attempt \(failure.attempt) failed: \(failure.error.message)"
                }
            case .recovered: "the sinks work again"
            case .deadLettered(let sink, let records, _): "sink \(sink): \(records) records written to the dead letters"
            case .storeBusy(let error, let attempt): "\(error.message); trying again (attempt \(attempt))"
            case .warning(let text): text
            case .schemaDelivered(let sink, let token): "sink \(sink): the model change at token \(token) delivered"
            }
        }

        /// Logs the event on `logger` (the service does; a library runner logs nothing itself):
        /// failures and a busy store as warnings, dead letters as errors, deliveries not at all.
        public func log(to logger: Logger) {
            switch self {
            case .delivered, .recovered: return
            case .failed(let failure):
                var metadata: Logger.Metadata = ["sink": "\(failure.sink)", "attempt": "\(failure.attempt)"]
                if let records = failure.records { metadata["records"] = "\(records)" }
                logger.warning("\(failure.step == .delivery ? "delivery" : failure.step.rawValue) failed: \(failure.error.message)", metadata: metadata)
            case .deadLettered(let sink, let records, let error):
                logger.error("records written to the dead letters: \(error.message)", metadata: ["sink": "\(sink)", "records": "\(records)"])
            case .storeBusy(let error, let attempt):
                logger.warning("the source store stayed locked: \(error.message)", metadata: ["attempt": "\(attempt)"])
            case .warning(let text):
                logger.warning("\(text)")
            case .schemaDelivered(let sink, let token):
                logger.info("the model change at token \(token) delivered", metadata: ["sink": "\(sink)"])
            }
        }
    }
}
