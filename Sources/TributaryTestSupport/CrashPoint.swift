import Foundation

/// Kills a process in the middle of its work, whatever the machine's speed: it waits until a
/// measure of the work done downstream (messages in a stream, a sink's checkpoint token)
/// passes a random point between where the run started and where it will end, then sends
/// SIGKILL. A fixed sleep lands after the work on a fast machine and before it on a slow one.
/// The waits block the calling thread on purpose: a `Task.sleep` on the cooperative pool,
/// which parallel tests keep busy, can wake hundreds of milliseconds late.
///
/// A fast pipeline may finish a round between two looks at its progress, so crash tests
/// alternate these kills with early ones (``kill(_:after:)``), which land while it starts.
///
/// ```swift
/// let process = try TributaryProcess.start(["run", file], environment: environment, output: log)
/// let midWork = CrashPoint.kill(process, from: before, to: before + 1_600) { try? messageCount() }
/// ```
public enum CrashPoint {
    /// Kills `process` early (even rounds: 1–15 ms after its start, before a pipeline has done any work) or mid-work (odd rounds:
    /// ``kill(_:from:to:timeout:progress:)``); returns whether work was left downstream
    /// (`progress()` below `to` once it died).
    ///
    /// ```swift
    /// if CrashPoint.killAtRandomPoint(process, round: round, from: before, to: end, progress: probe) { killedWithWorkLeft += 1 }
    /// ```
    public static func killAtRandomPoint(_ process: Process, round: Int, from start: Int64, to end: Int64, progress: () -> Int64?) -> Bool {
        if round.isMultiple(of: 2) {
            kill(process, after: .milliseconds(Int.random(in: 1...15)))
        } else {
            kill(process, from: start, to: end, progress: progress)
        }
        return (progress() ?? start) < end
    }

    /// Kills `process` with SIGKILL after `delay` (while it starts or begins its work) and
    /// waits for it.
    public static func kill(_ process: Process, after delay: Duration) {
        usleep(useconds_t(delay.components.seconds * 1_000_000 + delay.components.attoseconds / 1_000_000_000_000))
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Waits until `progress()` reaches a random value in the first half of `from + 1 ..< to` (or `timeout`
    /// passes), kills `process` with SIGKILL and waits for it; returns whether the work was
    /// unfinished when it died (`progress()` still below `to`).
    @discardableResult
    public static func kill(_ process: Process, from start: Int64, to end: Int64, timeout: Duration = .seconds(10),
                            progress: () -> Int64?) -> Bool {
        // In the first half of the work: the downstream measure moves in steps (a checkpoint, a
        // batch), and the last step ends the work.
        let target = end - start > 1 ? Int64.random(in: (start + 1)...max(start + 1, start + (end - start) / 2)) : end
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, process.isRunning, (progress() ?? start) < target {
            usleep(2_000)
        }
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return (progress() ?? start) < end
    }
}
