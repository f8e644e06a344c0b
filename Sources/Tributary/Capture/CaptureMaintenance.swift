import Dispatch

/// Runs a store's capture upkeep (``ForeignCapture/maintain(on:)``) on a timer while the
/// store is open, so it happens in a process whose own writes have stopped; cancelled
/// when released.
final class CaptureMaintenance {
    static let interval: DispatchTimeInterval = .milliseconds(250)
    private let timer: any DispatchSourceTimer

    init(_ tick: @escaping @Sendable () -> Void) {
        timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        timer.schedule(deadline: .now() + Self.interval, repeating: Self.interval, leeway: .milliseconds(50))
        timer.setEventHandler(handler: tick)
        timer.resume()
    }

    deinit {
        timer.cancel()
    }
}
