import Dispatch

/// Runs a store's capture upkeep (``ForeignCapture/maintain(on:)``) on a timer while the
/// store is open, so it happens in a process whose own writes have stopped; cancelled
/// when released.
final class CaptureMaintenance {
    /// Once a second: an idle process's wake-ups cost it little CPU (the idle watcher's
    /// budget is 5 ms a minute), and a log others grow passes its restart size by at most
    /// a second of their writes.
    static let interval: DispatchTimeInterval = .seconds(1)
    private let timer: any DispatchSourceTimer

    init(_ tick: @escaping @Sendable () -> Void) {
        timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        timer.schedule(deadline: .now() + Self.interval, repeating: Self.interval, leeway: .milliseconds(250))
        timer.setEventHandler(handler: tick)
        timer.resume()
    }

    deinit {
        timer.cancel()
    }
}
