import Foundation

/// Programs that do not use Tributary, writing a store: the `sqlite3` shell and
/// Python's `sqlite3` module, both linked with the system's SQLite.
enum ForeignWriter {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs `sql` in the `sqlite3` shell on `path` (with a busy timeout); throws with its
    /// error output when it fails.
    @discardableResult
    static func shell(_ path: URL, _ sql: String) throws -> String {
        try run("/usr/bin/sqlite3", [path.path], input: ".timeout 5000\n" + sql)
    }

    /// Runs a Python program with `db` bound to a `sqlite3` connection to `path`.
    @discardableResult
    static func python(_ path: URL, _ code: String) throws -> String {
        let program = "import sqlite3, sys\ndb = sqlite3.connect(sys.argv[1], timeout=5)\n" + code + "\n"
        return try run("/usr/bin/env", ["python3", "-c", program, path.path], input: "")
    }

    /// Starts a Python program (to be killed by the caller).
    static func startPython(_ path: URL, _ code: String) throws -> Process {
        let program = "import sqlite3, sys\ndb = sqlite3.connect(sys.argv[1], timeout=5)\n" + code + "\n"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", program, path.path]
        process.standardOutput = Pipe()
        try process.run()
        return process
    }

    private static func run(_ executable: String, _ arguments: [String], input: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0, errors.isEmpty else {
            throw Failure(description: "\(executable) \(arguments.last ?? "") failed (\(process.terminationStatus)): \(errors)")
        }
        return String(decoding: output, as: UTF8.self)
    }
}
