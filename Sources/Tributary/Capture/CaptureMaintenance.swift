import Dispatch

/// Runs a store's capture upkeep (``ForeignCapture/maintain(on:)``) on a timer while the
/// store is open, so it happens in a process whose own writes have stopped; cancelled
/// when released.
///
/// The interval adapts: a second while the log changes, doubling up to ``longest`` while it
/// does not, so an idle process wakes a few times a minute (the idle watcher's budget is
/// 5 ms of CPU a minute) while a log others grow passes its restart size by at most about a
/// second of their writes once they are under way.
final class CaptureMaintenance {
    static let shortest: DispatchTimeInterval = .seconds(1)
    static let longest = 8
    private let timer: any DispatchSourceTimer
    /// Seconds to the next tick; touched only by the timer's handler (one at a time).
    nonisolated(unsafe) private var seconds = 1

    /// `tick` says whether the log changed since the last tick.
    init(_ tick: @escaping @Sendable () -> Bool) {
        timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        timer.schedule(deadline: .now() + Self.shortest, leeway: .milliseconds(250))
        timer.setEventHandler { [weak self] in
            let changed = tick()
            guard let self else { return }
            self.seconds = changed ? 1 : min(self.seconds * 2, Self.longest)
            self.timer.schedule(deadline: .now() + .seconds(self.seconds), leeway: .milliseconds(250))
        }
        timer.resume()
    }

    deinit {
        timer.cancel()
    }
}
