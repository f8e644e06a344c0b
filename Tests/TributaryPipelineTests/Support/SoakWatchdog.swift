import Foundation
import Synchronization

/// Ends a soak that runs far past its time, so that a hang fails the run with where it hung
/// rather than holding CI until its own limit: after `limit`, prints the soak's frames in
/// this process's thread stacks (gdb, killed after a minute) and the child processes still
/// running, then exits 1.
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
            print(Self.output(of: ["timeout", "-s", "KILL", "60", "gdb", "-batch", "-p", "\(getpid())", "-ex", "thread apply all bt 25"])
                .split(separator: "\n").filter { $0.contains("Soak") || $0.contains("WriterLoop") || $0.contains("SupervisedProcess") || $0.contains("LocalServer") }
                .joined(separator: "\n"))
            print(Self.output(of: ["ps", "--ppid", "\(getpid())", "-o", "pid,etime,args"]))
            exit(1)
        }
    }

    func cancel() { done.withLock { $0 = true } }

    /// What `arguments` printed, through a file: gdb stops this process's threads, the one
    /// reading among them, and would block on a full pipe.
    private static func output(of arguments: [String]) -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("soak-watchdog-\(getpid())-\(UUID().uuidString.prefix(8))")
        guard FileManager.default.createFile(atPath: file.path, contents: nil), let handle = try? FileHandle(forWritingTo: file) else { return "(no file for \(arguments[0]))" }
        defer { try? FileManager.default.removeItem(at: file) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardOutput = handle
        process.standardError = handle
        guard (try? process.run()) != nil else { return "(\(arguments[0]) did not start)" }
        process.waitUntilExit()
        try? handle.close()
        return (try? String(contentsOf: file, encoding: .utf8)) ?? ""
    }
}
