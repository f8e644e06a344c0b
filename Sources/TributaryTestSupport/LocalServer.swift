import Foundation

/// A real server process (nats-server, redis-server, postgres) started on loopback with a
/// temporary directory and a free port, for tests and benchmarks. ``stop()`` ends it and
/// removes its directory; ``kill()`` and ``restart()`` let a test take the server away in the
/// middle of a run and bring it back on the same port with the same data. Servers still
/// running when the process exits are stopped by an exit handler.
///
/// ```swift
/// let nats = try NATSServer.start()
/// defer { nats.stop() }
/// print(nats.url)   // nats://127.0.0.1:40123
/// ```
public final class LocalServer: @unchecked Sendable {
    /// What to run and how to tell it answers.
    public struct Launch: Sendable {
        /// The executable.
        public var executable: String
        /// Its arguments.
        public var arguments: [String]
        /// Run as this user when the tests run as root (PostgreSQL refuses root).
        public var user: String?
        /// Returns true once the server answers.
        public var ready: @Sendable (_ port: Int) -> Bool
        /// Asks the server to shut down, for servers that keep the signal mask they inherit
        /// (a test runner's threads may block SIGTERM); nil sends SIGTERM.
        public var shutdown: (@Sendable (_ port: Int) -> Void)?

        /// A launch description.
        public init(executable: String, arguments: [String], user: String? = nil, ready: @escaping @Sendable (_ port: Int) -> Bool,
                    shutdown: (@Sendable (_ port: Int) -> Void)? = nil) {
            self.executable = executable
            self.arguments = arguments
            self.user = user
            self.ready = ready
            self.shutdown = shutdown
        }
    }

    /// The server's name, for messages.
    public let name: String
    /// The loopback port it listens on.
    public let port: Int
    /// Its temporary directory (data, logs).
    public let directory: URL
    /// Where its output goes.
    public var logFile: URL { directory.appendingPathComponent("server.log") }

    private let launch: Launch
    private let lock = NSLock()
    private var process: Process?

    /// Starts `launch` (built from the port and directory) and waits until it answers.
    public init(name: String, launch makeLaunch: (_ port: Int, _ directory: URL) throws -> Launch) throws {
        self.name = name
        self.port = try FreePort.next()
        self.directory = FileManager.default.temporaryDirectory.appendingPathComponent("tributary-\(name)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.launch = try makeLaunch(port, directory)
        if let user = launch.user, getuid() == 0 { try Self.chown(directory, to: user) }
        try start()
        LocalServerRegistry.shared.add(self)
    }

    /// Whether the server process is running.
    public var isRunning: Bool { lock.withLock { process?.isRunning ?? false } }

    /// Starts the server again after ``kill()`` or ``terminate()``, on the same port and data.
    public func restart() throws { try start() }

    /// Stops the server with SIGKILL, as a crash or an unplugged machine would.
    public func kill() {
        guard let process = lock.withLock({ self.process }) else { return }
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Freezes the server and its child processes with SIGSTOP, as a hung machine would: its
    /// connections stay open and nothing answers, until ``resume()``.
    public func suspend() { signalTree(SIGSTOP) }

    /// Lets a server frozen by ``suspend()`` run again.
    public func resume() { signalTree(SIGCONT) }

    /// Sends `signal` to the server's process and its children (PostgreSQL's backends, one per connection).
    private func signalTree(_ signal: Int32) {
        guard let process = lock.withLock({ self.process }), process.isRunning else { return }
        let pid = process.processIdentifier
        let children = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
        for child in children.split(separator: " ").compactMap({ Int32($0) }) { Foundation.kill(child, signal) }
        Foundation.kill(pid, signal)
    }

    /// Stops the server cleanly (its shutdown command or SIGTERM, then SIGKILL after 10 s).
    public func terminate() {
        guard let process = lock.withLock({ self.process }) else { return }
        if process.isRunning {
            if let shutdown = launch.shutdown { shutdown(port) } else { process.terminate() }
        }
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
    }

    /// Stops the server and removes its directory.
    public func stop() {
        terminate()
        lock.withLock { process = nil }
        LocalServerRegistry.shared.remove(self)
        try? FileManager.default.removeItem(at: directory)
    }

    /// The server's log, for failure messages.
    public var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    private func start() throws {
        let process = Process()
        var arguments = launch.arguments
        if let user = launch.user, getuid() == 0 {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            arguments = ["--reuid", user, "--regid", user, "--init-groups", "--", launch.executable] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: launch.executable)
        }
        process.arguments = arguments
        process.currentDirectoryURL = directory
        if !FileManager.default.fileExists(atPath: logFile.path) { _ = FileManager.default.createFile(atPath: logFile.path, contents: nil) }
        let handle = try FileHandle(forWritingTo: logFile)
        handle.seekToEndOfFile()
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        lock.withLock { self.process = process }
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if launch.ready(port) { return }
            if !process.isRunning { break }
            usleep(20_000)
        }
        terminate()
        throw LocalServerError("\(name) did not start on 127.0.0.1:\(port): \(log.suffix(2000))")
    }

    static func chown(_ url: URL, to user: String) throws {
        guard let entry = getpwnam(user) else { throw LocalServerError("no user \(user) to run the server as (install its package: scripts/bootstrap)") }
        guard Foundation.chown(url.path, entry.pointee.pw_uid, entry.pointee.pw_gid) == 0 else {
            throw LocalServerError("cannot give \(url.path) to \(user): errno \(errno)")
        }
    }
}

/// Why a local server could not be started or used.
public struct LocalServerError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String
    /// An error.
    public init(_ description: String) { self.description = description }
}

/// The servers started by this process, stopped when it exits.
final class LocalServerRegistry: @unchecked Sendable {
    static let shared = LocalServerRegistry()
    private let lock = NSLock()
    private var servers: [ObjectIdentifier: LocalServer] = [:]

    private init() {
        atexit { LocalServerRegistry.shared.stopAll() }
    }

    func add(_ server: LocalServer) { lock.withLock { servers[ObjectIdentifier(server)] = server } }
    func remove(_ server: LocalServer) { _ = lock.withLock { servers.removeValue(forKey: ObjectIdentifier(server)) } }
    func stopAll() {
        let all = lock.withLock { Array(servers.values) }
        for server in all { server.stop() }
    }
}
