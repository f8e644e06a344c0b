import Foundation
import Testing
import TributaryTestSupport

/// What a run of the built `tributary` binary printed.
typealias CLIResult = TributaryProcess.Result

enum CLI {
    /// The built executable (TributaryTestSupport finds it).
    static var binary: URL { TributaryProcess.binary }

    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    static var blogModel: String { repositoryRoot.appendingPathComponent("examples/blog/model.yml").path }

    @discardableResult
    static func run(_ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]) throws -> CLIResult {
        try TributaryProcess.run(arguments, stdin: stdin, environment: environment)
    }

    /// Exports `db` with a snapshot into a stream named `name` (with `arguments` such as a
    /// format and a consumer), verifies the stream and replays it into a new store; expects
    /// each step to succeed and returns the replica's path.
    static func exportVerifyReplay(_ db: String, in scratch: Scratch, name: String = "stream", arguments: [String] = [],
                                   sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let stream = scratch.path(name), replica = scratch.path("replica-\(name).sqlite")
        let exported = try run(["export", db, "--to", stream, "--snapshot"] + arguments)
        #expect(exported.status == 0, "\(name): \(exported.stderr)", sourceLocation: sourceLocation)
        let verified = try run(["verify", stream])
        #expect(verified.status == 0, "\(name): \(verified.stdout) \(verified.stderr)", sourceLocation: sourceLocation)
        let replayed = try run(["replay", stream, "--into", replica])
        #expect(replayed.status == 0, "\(name): \(replayed.stderr)", sourceLocation: sourceLocation)
        return replica
    }

    /// Runs the system's `sqlite3` shell on `path`: another program reading or writing the file.
    @discardableResult
    static func sqlite3(_ path: String, _ sql: String) throws -> CLIResult {
        try TributaryProcess.run([path], stdin: ".timeout 5000\n" + sql, executable: URL(fileURLWithPath: "/usr/bin/sqlite3"))
    }

    /// Runs `script` in Python with `c`, a `sqlite3` connection to the database at `path`
    /// (another program, binding values the shell's SQL cannot spell, such as -0.0).
    static func python(_ path: String, _ script: String) throws -> CLIResult {
        let program = "import sqlite3, sys\nc = sqlite3.connect(sys.argv[1], timeout=5)\n" + script + "\n"
        return try TributaryProcess.run(["-c", program, path], stdin: "", executable: URL(fileURLWithPath: "/usr/bin/python3"))
    }
}

extension CLI {
    /// Runs the binary on a pseudo-terminal (util-linux `script`), as a person at a terminal
    /// would, and returns what the terminal showed (standard output and error together);
    /// `unsetting` names variables of this process's environment to leave out.
    static func runOnTerminal(_ arguments: [String], environment: [String: String], unsetting: [String] = []) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        let command = ([binary.path] + arguments).map { "'\($0)'" }.joined(separator: " ")
        process.arguments = ["-qec", command, "/dev/null"]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }.filter { !unsetting.contains($0.key) }
        let out = Pipe()
        process.standardOutput = out
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n")
    }
}

extension CLI {
    /// A new blog store (examples/blog/model.yml) at `path`, made by `tributary init` with history on.
    static func makeBlogStore(at path: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let result = try run(["init", path, "--model", blogModel, "--history"])
        #expect(result.status == 0, "\(result.stderr)", sourceLocation: sourceLocation)
        return path
    }

    /// One line of `--json` output as an object.
    static func json(_ line: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    /// NDJSON lines of posts `ext-N` titled "Post N", created at second N.
    static func posts(_ range: Range<Int>) -> String {
        range.map { #"{"externalID": "ext-\#($0)", "title": "Post \#($0)", "createdAt": \#($0)}"# }.joined(separator: "\n") + "\n"
    }
}

/// A temporary directory removed when released.
final class Scratch: Sendable {
    let url: URL
    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("tributary-cli-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    func write(_ name: String, _ text: String) -> String {
        let p = path(name)
        try! Data(text.utf8).write(to: URL(fileURLWithPath: p))
        return p
    }
    deinit { try? FileManager.default.removeItem(at: url) }
}
