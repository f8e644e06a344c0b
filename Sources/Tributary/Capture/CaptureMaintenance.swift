import Foundation

/// Runs a store's capture upkeep (``ForeignCapture/maintain(on:)``) on a thread of its own
/// while the store is open, so it happens in a process whose own writes have stopped;
/// stopped when released.
///
/// The interval adapts: a second while the log changes, doubling up to ``longest`` seconds
/// while it does not, so an idle process wakes a few times a minute (the idle watcher's
/// budget is 5 ms of CPU a minute; a thread that sleeps costs less to wake than a dispatch
/// timer, whose worker thread is made again after each idle spell), while a log others
/// grow passes its restart size by at most about a second of their writes once they are
/// under way.
final class CaptureMaintenance: Sendable {
    static let longest: TimeInterval = 8
    private let condition = NSCondition()
    nonisolated(unsafe) private var stopped = false

    /// `tick` says whether the log changed since the last tick.
    init(_ tick: @escaping @Sendable () -> Bool) {
        let thread = Thread { [condition = self.condition, weak self] in
            var seconds: TimeInterval = 1
            while true {
                condition.lock()
                let deadline = Date().addingTimeInterval(seconds)
                while self?.stopped == false, condition.wait(until: deadline) {}
                let stop = self?.stopped ?? true
                condition.unlock()
                if stop { return }
                seconds = tick() ? 1 : min(seconds * 2, Self.longest)
            }
        }
        thread.name = "tributary-capture"
        thread.start()
    }

    deinit {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }
}
