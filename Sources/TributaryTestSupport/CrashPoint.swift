import Foundation

/// Kills a process in the middle of its work, whatever the machine's speed: it waits until a
/// measure of the work done downstream (messages in a stream, a sink's checkpoint token)
/// passes a random point between where the run started and where it will end, then sends
/// SIGKILL. A fixed sleep lands after the work on a fast machine and before it on a slow one.
///
/// A fast pipeline may finish a round between two looks at its progress, so crash tests
/// alternate these kills with early ones (``kill(_:after:)``), which land while it starts.
///
/// ```swift
/// let process = try TributaryProcess.start(["run", file], environment: environment, output: log)
/// let midWork = await CrashPoint.kill(process, from: before, to: before + 1_600) { try? messageCount() }
/// ```
public enum CrashPoint {
    /// Kills `process` early (even rounds: 5–60 ms after its start) or mid-work (odd rounds:
    /// ``kill(_:from:to:timeout:progress:)``); returns whether work was left downstream
    /// (`progress()` below `to` once it died).
    ///
    /// ```swift
    /// if await CrashPoint.killAtRandomPoint(process, round: round, from: before, to: end, progress: probe) { killedWithWorkLeft += 1 }
    /// ```
    public static func killAtRandomPoint(_ process: Process, round: Int, from start: Int64, to end: Int64, progress: () async -> Int64?) async -> Bool {
        if round.isMultiple(of: 2) {
            await kill(process, after: .milliseconds(Int.random(in: 5...60)))
        } else {
            await kill(process, from: start, to: end, progress: progress)
        }
        return (await progress() ?? start) < end
    }

    /// Kills `process` with SIGKILL after `delay` (while it starts or begins its work) and
    /// waits for it.
    public static func kill(_ process: Process, after delay: Duration) async {
        try? await Task.sleep(for: delay)
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Waits until `progress()` reaches a random value in the first half of `from + 1 ..< to` (or `timeout`
    /// passes), kills `process` with SIGKILL and waits for it; returns whether the work was
    /// unfinished when it died (`progress()` still below `to`).
    @discardableResult
    public static func kill(_ process: Process, from start: Int64, to end: Int64, timeout: Duration = .seconds(10),
                            progress: () async -> Int64?) async -> Bool {
        // In the first half of the work: the downstream measure moves in steps (a checkpoint, a
        // batch), and the last step ends the work.
        let target = end - start > 1 ? Int64.random(in: (start + 1)...max(start + 1, start + (end - start) / 2)) : end
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, process.isRunning, (await progress() ?? start) < target {
            try? await Task.sleep(for: .milliseconds(2))
        }
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return (await progress() ?? start) < end
    }
}
