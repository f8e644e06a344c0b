import Foundation
import Synchronization

/// A ``ProgressLine`` that several tasks add to: the pipelines of `run --once`, each in a
/// task of its own, count what they deliver on one line.
final class SharedProgressLine: Sendable {
    private let state: Mutex<(line: ProgressLine, done: Int)>

    init(_ line: sending ProgressLine) {
        state = Mutex((line, 0))
    }

    /// Adds `count` to the total shown.
    func add(_ count: Int) {
        state.withLock { state in
            state.done += count
            state.line.update(state.done)
        }
    }

    /// Clears the line.
    func finish() {
        state.withLock { $0.line.finish() }
    }

    /// ` in 1.2 s (10,234 records/s)` for a summary line of `done` records.
    func rateText(_ done: Int) -> String {
        state.withLock { $0.line.rateText(done) }
    }
}
