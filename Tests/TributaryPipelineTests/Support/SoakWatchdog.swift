import Foundation
import Synchronization

/// Ends a soak that runs far past its time, so that a hang fails the run with where it hung
/// rather than holding CI until its own limit: after `limit`, prints the soak's frames in
/// this process's thread stacks (gdb) and the child processes still running, then exits 1.
final class SoakWatchdog: Sendable {
    private let done = Mutex(false)

    /// Starts watching; ``cancel()`` once the soak is over.
    init(limit: Duration) {
        Thread.detachNewThread { [self] in
            let deadline = ContinuousClock.now + limit
            while ContinuousClock.now < deadline {
                if done.withLock({ $0 }) { return }
                sleep(1)
            }
            if done.withLock({ $0 }) { return }
            print("soak: still running \(limit) after it started; where this process waits, and what it started that still runs:")
            print(Self.output(of: ["gdb", "-batch", "-p", "\(getpid())", "-ex", "thread apply all bt 25"])
                .split(separator: "\n").filter { $0.contains("Soak") || $0.contains("WriterLoop") || $0.contains("SupervisedProcess") || $0.contains("LocalServer") }
                .joined(separator: "\n"))
            print(Self.output(of: ["ps", "--ppid", "\(getpid())", "-o", "pid,etime,args"]))
            exit(1)
        }
    }

    func cancel() { done.withLock { $0 = true } }

    private static func output(of arguments: [String]) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        guard (try? process.run()) != nil else { return "(\(arguments[0]) did not start)" }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
