import Foundation
import TributaryTestSupport

/// A long-running process of the soak (a follower, the pipeline, the context writer) that the
/// chaos loop kills with SIGKILL and starts again. Each start is an ``Incarnation`` with its
/// own output file, the position it started from and samples of its resident memory.
final class SupervisedProcess: @unchecked Sendable {   // every mutable field is behind `lock`
    /// One start of the process.
    struct Incarnation {
        /// Where its standard output and error went.
        let output: URL
        /// What `startPosition` returned just before it started (a consumer's token, or 0).
        let startPosition: Int64
        /// When it started.
        let started: ContinuousClock.Instant
        /// Its resident memory (kB) over time (seconds since it started).
        var samples: [(seconds: Double, kilobytes: Int)] = []
        /// How it ended: killed by the chaos loop, or stopped with SIGTERM at the end (its status).
        var killed = false
        var exitStatus: Int32?
    }

    let name: String
    private let directory: URL
    private let launch: (_ output: URL) throws -> Process
    private let startPosition: () -> Int64
    private let lock = NSLock()
    private var process: Process?
    private var all: [Incarnation] = []

    /// A process named `name` (output files `name-N.log` in `directory`) that `launch` starts.
    init(name: String, directory: URL, startPosition: @escaping () -> Int64 = { 0 }, launch: @escaping (_ output: URL) throws -> Process) {
        self.name = name
        self.directory = directory
        self.startPosition = startPosition
        self.launch = launch
    }

    /// Every incarnation so far, oldest first.
    var incarnations: [Incarnation] { lock.withLock { all } }

    /// The current incarnation's process ID, nil when none runs.
    var processIdentifier: Int32? { lock.withLock { process?.isRunning == true ? process?.processIdentifier : nil } }

    /// Whether the current incarnation runs.
    var isRunning: Bool { lock.withLock { process?.isRunning ?? false } }

    /// How long the current incarnation has run (zero when none runs).
    var age: Duration { lock.withLock { process?.isRunning == true ? ContinuousClock.now - all[all.count - 1].started : .zero } }

    /// Starts a new incarnation.
    func start() throws {
        let position = startPosition()
        try lock.withLock {
            let output = directory.appendingPathComponent("\(name)-\(all.count).log")
            let started = try launch(output)
            process = started
            all.append(Incarnation(output: output, startPosition: position, started: .now))
        }
    }

    /// Kills the current incarnation with SIGKILL and waits for it; false when none ran.
    @discardableResult
    func kill() -> Bool {
        guard let process = lock.withLock({ self.process }), process.isRunning else { return false }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        lock.withLock { all[all.count - 1].killed = true }
        return true
    }

    /// Asks the current incarnation to stop (SIGTERM), waits up to `timeout` (then SIGKILL),
    /// and records its exit status.
    func terminate(timeout: TimeInterval = 60) {
        guard let process = lock.withLock({ self.process }), process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        lock.withLock { all[all.count - 1].exitStatus = process.terminationReason == .exit ? process.terminationStatus : -process.terminationStatus }
    }

    /// Records the current incarnation's resident memory.
    func sampleMemory() {
        lock.withLock {
            guard let process, process.isRunning, let kilobytes = Self.residentKilobytes(process.processIdentifier) else { return }
            let seconds = (ContinuousClock.now - all[all.count - 1].started) / .seconds(1)
            all[all.count - 1].samples.append((seconds, kilobytes))
        }
    }

    /// The resident set size of `pid` in kB (VmRSS in /proc), nil once it has gone.
    static func residentKilobytes(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        }
        return nil
    }
}
