import Foundation

/// Runs the built `tributary` executable (it sits beside the test bundle or the benchmark
/// binary, or a few folders up), capturing what it prints, or starts it in the background
/// for tests that signal or kill it.
///
/// ```swift
/// let result = try TributaryProcess.run(["verify", streamPath])
/// #expect(result.status == 0, "\(result.stderr)")
/// let process = try TributaryProcess.start(["run", pipelinePath], environment: [:], output: logURL)
/// kill(process.processIdentifier, SIGKILL)
/// ```
public enum TributaryProcess {
    /// The executable's URL.
    public static var binary: URL {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 where !FileManager.default.fileExists(atPath: dir.appendingPathComponent("tributary").path) {
            dir = dir.deletingLastPathComponent()
        }
        return dir.appendingPathComponent("tributary")
    }

    /// What a finished run printed, and its exit status.
    public struct Result: Sendable {
        /// The exit status.
        public let status: Int32
        /// Standard output.
        public let stdout: String
        /// Standard error.
        public let stderr: String
        /// A result (for runs made another way, such as under another user).
        public init(status: Int32, stdout: String, stderr: String) {
            self.status = status
            self.stdout = stdout
            self.stderr = stderr
        }
        /// Standard output's lines.
        public var stdoutLines: [String] { stdout.split(separator: "\n").map(String.init) }
        /// Standard error's lines.
        public var stderrLines: [String] { stderr.split(separator: "\n").map(String.init) }
    }

    /// Starts the executable (or `executable`, such as another product built beside it) with
    /// output going to the file `output` (so a killed child leaves no pipe behind); the
    /// environment adds to this process's.
    public static func start(_ arguments: [String], environment: [String: String], output: URL, executable: URL? = nil) throws -> Process {
        let process = Process()
        process.executableURL = executable ?? binary
        process.arguments = arguments
        process.environment = merged(environment)
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let handle = try FileHandle(forWritingTo: output)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        return process
    }

    /// Runs to the end with `stdin` as its input (none when nil), capturing its output; runs
    /// `executable` (such as the `sqlite3` shell) instead of the binary when given.
    @discardableResult
    public static func run(_ arguments: [String], stdin: String? = nil, environment: [String: String] = [:], executable: URL? = nil) throws -> Result {
        let process = Process()
        process.executableURL = executable ?? binary
        process.arguments = arguments
        process.environment = merged(environment)
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        let (outData, errData) = finish(process, out: out, err: err)
        return Result(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self))
    }

    /// Reads both pipes to the end, then waits for `process`: a child printing much to both
    /// cannot block on a full pipe.
    ///
    /// ```swift
    /// let (stdout, stderr) = TributaryProcess.finish(process, out: out, err: err)
    /// ```
    public static func finish(_ process: Process, out: Pipe, err: Pipe) -> (stdout: Data, stderr: Data) {
        nonisolated(unsafe) var outData = Data()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async { outData = out.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return (outData, errData)
    }

    private static func merged(_ environment: [String: String]) -> [String: String] {
        var merged = ProcessInfo.processInfo.environment
        for (key, value) in environment { merged[key] = value }
        return merged
    }
}
