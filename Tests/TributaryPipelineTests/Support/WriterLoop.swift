import Foundation
import TributaryTestSupport

/// One writer of the soak: a thread that starts its command (a short `tributary` command, or
/// the long-running soak-writer) again and again until stopped; the chaos loop kills the
/// running one. Every run's end is kept: killed, exited 0, or failed with its output, and any
/// BUSY or locked error it printed.
final class WriterLoop: @unchecked Sendable {   // every mutable field is behind `lock`
    /// What the writer did.
    struct Tally {
        var runs = 0
        var killed = 0
        var failures: [String] = []
        var busy: [String] = []
        var peakKilobytes = 0
    }

    let name: String
    private let directory: URL
    private let command: (_ round: Int) throws -> (arguments: [String], executable: URL?)
    private let pause: ClosedRange<Int>
    private let lock = NSLock()
    private var process: Process?
    private var stopping = false
    /// Whether ``stop(terminating:timeout:)`` ends the running command with SIGTERM.
    private var terminatingOnStop = false
    private var counts = Tally()
    private let finished = DispatchSemaphore(value: 0)

    /// A writer running `command(round)` for rounds 1, 2, …, pausing `pause` milliseconds between runs.
    init(name: String, directory: URL, pause: ClosedRange<Int>, command: @escaping (_ round: Int) throws -> (arguments: [String], executable: URL?)) {
        self.name = name
        self.directory = directory
        self.pause = pause
        self.command = command
    }

    var tally: Tally { lock.withLock { counts } }

    /// Starts the thread.
    func start() {
        Thread.detachNewThread { [self] in
            var round = 0
            while !lock.withLock({ stopping }) {
                round += 1
                run(round)
                usleep(useconds_t(Int.random(in: pause) * 1_000))
            }
            finished.signal()
        }
    }

    /// Waits up to a second for a command to run, lets it work a few milliseconds, then kills
    /// it with SIGKILL (mid-transaction, often); false when none ran.
    @discardableResult
    func kill() -> Bool {
        let deadline = ContinuousClock.now + .seconds(1)
        while ContinuousClock.now < deadline {
            if let process = lock.withLock({ self.process }), process.isRunning {
                usleep(useconds_t(Int.random(in: 0...30_000)))
                guard process.isRunning else { return false }
                Foundation.kill(process.processIdentifier, SIGKILL)
                return true
            }
            usleep(2_000)
        }
        return false
    }

    /// Lets the running command finish (SIGTERM for one that runs until stopped), starts no
    /// other, and waits for the thread. SIGTERM goes again every second: the command may be
    /// starting (not yet the running one, or before its handler is set, which loses the
    /// signal). One that has not finished in `timeout` is killed and counted as a failure.
    func stop(terminating: Bool, timeout: Duration = .seconds(120)) {
        lock.withLock { stopping = true; terminatingOnStop = terminating }
        let deadline = ContinuousClock.now + timeout
        repeat {
            guard let process = lock.withLock({ self.process }), process.isRunning else { continue }
            if ContinuousClock.now >= deadline {
                let line = "\(name): its command did not finish within \(timeout) of the stop; killed"
                lock.withLock { if counts.failures.last != line { counts.failures.append(line) } }
                Foundation.kill(process.processIdentifier, SIGKILL)
            } else if terminating {
                Foundation.kill(process.processIdentifier, SIGTERM)
            }
        } while finished.wait(timeout: .now() + 1) == .timedOut
    }

    /// Records the running command's resident memory in the peak.
    func sampleMemory() {
        lock.withLock {
            guard let process, process.isRunning, let kilobytes = SupervisedProcess.residentKilobytes(process.processIdentifier) else { return }
            counts.peakKilobytes = max(counts.peakKilobytes, kilobytes)
        }
    }

    private func run(_ round: Int) {
        let output = directory.appendingPathComponent("\(name).log")
        let started: Process
        do {
            let (arguments, executable) = try command(round)
            started = try TributaryProcess.start(arguments, environment: [:], output: output, executable: executable)
        } catch {
            lock.withLock { counts.failures.append("round \(round): could not start: \(error)") }
            return
        }
        lock.withLock { process = started }
        started.waitUntilExit()
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        lock.withLock {
            process = nil
            counts.runs += 1
            counts.busy += text.split(separator: "\n").filter { $0.lowercased().contains("busy") || $0.lowercased().contains("locked") }.map { "\(name): \($0)" }
            if started.terminationReason == .uncaughtSignal && started.terminationStatus == SIGKILL {
                counts.killed += 1
            } else if started.terminationReason == .uncaughtSignal && started.terminationStatus == SIGTERM && terminatingOnStop {
                // Stopped before it set its handler.
            } else if started.terminationStatus != 0 {
                counts.failures.append("\(name) round \(round) exited \(started.terminationStatus): \(text.suffix(500))")
            }
        }
    }
}
