import Foundation

/// A PostgreSQL cluster made by `initdb` in a temporary directory and served on loopback,
/// trusting local connections (user ``user``, database ``database``). Runs as the
/// `postgres` system user when the tests run as root, as PostgreSQL requires.
///
/// ```swift
/// let postgres = try PostgresServer.start()
/// defer { postgres.stop() }
/// let url = postgres.url   // postgres://tributary@127.0.0.1:PORT/postgres
/// ```
public enum PostgresServer {
    /// The superuser `initdb` creates.
    public static let user = "tributary"
    /// The database to connect to.
    public static let database = "postgres"

    /// Runs `initdb`, then starts `postgres` and waits until it accepts connections.
    /// `durable: false` (the default, for tests) turns fsync off.
    public static func start(durable: Bool = false) throws -> LocalServer {
        try LocalServer(name: "postgres") { port, directory in
            let bin = try binDirectory()
            let data = directory.appendingPathComponent("data")
            let runAs = getuid() == 0 ? "postgres" : nil
            if let runAs { try LocalServer.chown(directory, to: runAs) }
            try initdb(bin: bin, data: data, directory: directory, runAs: runAs)
            var arguments = ["-D", data.path, "-p", "\(port)", "-k", directory.path, "-c", "listen_addresses=127.0.0.1"]
            if !durable { arguments += ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"] }
            let isReady = bin + "/pg_isready"
            return LocalServer.Launch(executable: bin + "/postgres", arguments: arguments, user: runAs, ready: { port in
                FreePort.accepts(port) && run(isReady, ["-q", "-h", "127.0.0.1", "-p", "\(port)", "-U", user, "-d", database]) == 0
            })
        }
    }

    /// The rows `sql` returns from `server` through `psql`, one line each, fields separated by
    /// `|`, NULL as `∅`; a failed statement throws with psql's message.
    ///
    /// ```swift
    /// let rows = try PostgresServer.query(postgres, "SELECT count(*) FROM mirror.\"Post\"")
    /// ```
    public static func query(_ server: LocalServer, _ sql: String) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try binDirectory() + "/psql")
        process.arguments = ["-X", "-q", "-A", "-t", "-F", "|", "-P", "null=∅", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", "\(server.port)",
                             "-U", user, "-d", database, "-c", sql]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let (data, errors) = TributaryProcess.finish(process, out: out, err: err)
        guard process.terminationStatus == 0 else { throw LocalServerError("psql: \(String(decoding: errors, as: UTF8.self))") }
        return String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    }

    /// The folder holding PostgreSQL's server programs (the newest installed version).
    static func binDirectory() throws -> String {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted()
        if let newest = versions.last, FileManager.default.isExecutableFile(atPath: "\(root)/\(newest)/bin/postgres") { return "\(root)/\(newest)/bin" }
        return URL(fileURLWithPath: try Executables.find("postgres", in: [])).deletingLastPathComponent().path
    }

    private static func initdb(bin: String, data: URL, directory: URL, runAs: String?) throws {
        var arguments = ["-D", data.path, "-U", user, "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"]
        var executable = bin + "/initdb"
        if let runAs {
            arguments = ["--reuid", runAs, "--regid", runAs, "--init-groups", "--", executable] + arguments
            executable = "/usr/bin/setpriv"
        }
        let log = directory.appendingPathComponent("initdb.log")
        guard run(executable, arguments, log: log, in: directory) == 0 else {
            throw LocalServerError("initdb failed: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        }
    }

    @discardableResult
    static func run(_ executable: String, _ arguments: [String], log: URL? = nil, in directory: URL? = nil) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        if let log {
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            if let handle = try? FileHandle(forWritingTo: log) { process.standardOutput = handle; process.standardError = handle }
        } else {
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
        }
        do { try process.run() } catch { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
