import Foundation
import Tributary
import TributaryPipeline

/// The pipelines' states in `status`: one line each, and one JSON object each.
enum PipelineStatusLines {
    /// `pipeline webhook: retrying: sink webhook: … (process 4242, since …, heartbeat 3 s ago)`,
    /// or `pipeline webhook: stopped (process 4242 is gone; it was running, …)`.
    static func line(_ status: PipelineStatus, now: Date = Date()) -> String {
        let state = status.effectiveState(now: now)
        var line = "pipeline \(TerminalText.escaped(status.pipeline)): \(state.rawValue)"
        if state == status.state, let error = status.lastError { line += ": \(TerminalText.escaped(error))" }
        let heartbeat = "heartbeat \(Int(max(0, now.timeIntervalSince(status.heartbeat)).rounded())) s ago"
        if state == status.state {
            line += " (process \(status.process), since \(ISO8601.string(from: status.since)), \(heartbeat))"
        } else {
            line += " (process \(status.process) is gone; it was \(status.state.rawValue)\(status.lastError.map { ": \(TerminalText.escaped($0))" } ?? ""), \(heartbeat))"
        }
        return line
    }

    /// The JSON object of one pipeline: `state` is the state to believe (stopped when the
    /// process is gone), `recordedState` what the process last wrote.
    static func write(_ status: PipelineStatus, to o: inout JSONWriter, now: Date = Date()) {
        o.field("name", status.pipeline)
        o.field("consumer", status.consumer)
        o.field("state", status.effectiveState(now: now).rawValue)
        o.field("recordedState", status.state.rawValue)
        o.field("lastError", status.lastError.map { .string($0) } ?? .null)
        o.field("process", .integer(Int64(status.process)))
        o.field("host", status.host)
        o.field("since", ISO8601.string(from: status.since))
        o.field("heartbeatAt", ISO8601.string(from: status.heartbeat))
    }
}
