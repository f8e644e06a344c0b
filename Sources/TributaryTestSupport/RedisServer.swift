import Foundation

/// redis-server on loopback, without persistence unless asked.
///
/// ```swift
/// let redis = try RedisServer.start()
/// defer { redis.stop() }
/// let url = redis.url   // redis://127.0.0.1:PORT
/// ```
public enum RedisServer {
    /// Starts redis-server; `appendOnly` keeps its data across ``LocalServer/kill()`` and
    /// ``LocalServer/restart()`` (every write fsynced).
    public static func start(appendOnly: Bool = false) throws -> LocalServer {
        try LocalServer(name: "redis") { port, directory in
            LocalServer.Launch(
                executable: try Executables.find("redis-server", in: ["/usr/bin", "/usr/local/bin"]),
                arguments: ["--port", "\(port)", "--bind", "127.0.0.1", "--dir", directory.path, "--save", "",
                            "--appendonly", appendOnly ? "yes" : "no", "--appendfsync", "always", "--daemonize", "no"],
                // Ready once it answers PING: while it loads its data it answers -LOADING.
                ready: { FreePort.request("PING\r\n", to: $0) == "+PONG\r\n" },
                shutdown: { FreePort.send("SHUTDOWN\r\n", to: $0) })
        }
    }
}
