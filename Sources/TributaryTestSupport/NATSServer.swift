import Foundation

/// nats-server with JetStream, on loopback.
///
/// ```swift
/// let nats = try NATSServer.start()
/// defer { nats.stop() }
/// let url = nats.url   // nats://127.0.0.1:PORT
/// ```
public enum NATSServer {
    /// Starts nats-server (JetStream on, its store in the server's directory).
    public static func start() throws -> LocalServer {
        try LocalServer(name: "nats") { port, directory in
            LocalServer.Launch(
                executable: try Executables.find("nats-server", in: ["/usr/sbin", "/usr/bin", "/usr/local/bin"]),
                arguments: ["-a", "127.0.0.1", "-p", "\(port)", "-js", "-sd", directory.appendingPathComponent("jetstream").path],
                ready: { FreePort.accepts($0) })
        }
    }
}

extension LocalServer {
    /// The server's URL with the scheme clients expect (`nats://`, `redis://`, `postgres://`).
    ///
    /// ```swift
    /// let environment = ["NATS_URL": nats.url]
    /// ```
    public var url: String {
        switch name {
        case "postgres": return "postgres://\(PostgresServer.user)@127.0.0.1:\(port)/\(PostgresServer.database)"
        default: return "\(name)://127.0.0.1:\(port)"
        }
    }
}

/// Finding the servers' executables.
enum Executables {
    static func find(_ name: String, in directories: [String]) throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":").map(String.init) ?? []
        for directory in directories + path {
            let candidate = directory + "/" + name
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw LocalServerError("\(name) is not installed: run scripts/bootstrap")
    }
}
