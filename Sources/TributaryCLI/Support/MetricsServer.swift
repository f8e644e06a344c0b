import Foundation
import CoreMetrics
import Prometheus
import Tributary
import TributaryPipeline
#if canImport(Glibc)
import Glibc
#endif

/// The `tributary` command's Prometheus exporter: the libraries only record through
/// swift-metrics, and the program picks the backend, as it bootstraps swift-log's. Serves a
/// Prometheus registry as text on `GET /metrics` (any path but `/healthz`, in fact)
/// over plain HTTP/1.1, one short connection per scrape, on a thread of its own; and, given
/// a board, the pipelines' health on `GET /healthz`: 200 with one line a pipeline
/// (`search-index: running`), or 503 when one is retrying or failed. Loopback by default:
/// an address of just a port binds 127.0.0.1.
///
/// ```swift
/// let registry = PrometheusCollectorRegistry()
/// let server = try MetricsServer(address: "127.0.0.1:9464", registry: registry, health: board)
/// print(server.port)   // curl http://127.0.0.1:9464/metrics; curl -i http://127.0.0.1:9464/healthz
/// ```
final class MetricsServer: Sendable {
    /// The port it listens on (useful when asked for port 0).
    let port: UInt16
    /// The host it listens on.
    let host: String
    private let listener: Int32

    /// Starts serving `registry` on `address` (`HOST:PORT` or `PORT`; IPv4), and `health`'s
    /// pipelines on `/healthz` when given.
    init(address: String, registry: PrometheusCollectorRegistry, health: PipelineStatusBoard? = nil) throws {
        let parts = address.split(separator: ":", omittingEmptySubsequences: false)
        let host = parts.count == 2 ? String(parts[0]) : "127.0.0.1"
        guard parts.count <= 2, let portNumber = UInt16(parts.last ?? ""), inet_addr(host) != INADDR_NONE else {
            throw TributaryError(.invalidInput, "'\(address)' is not a metrics address", hint: "write HOST:PORT or PORT, such as 127.0.0.1:9464")
        }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TributaryError(.io, "cannot open a socket for metrics (errno \(errno))") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        socketAddress.sin_port = portNumber.bigEndian
        socketAddress.sin_addr.s_addr = inet_addr(host)
        let bound = withUnsafePointer(to: &socketAddress) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, listen(fd, 16) == 0 else {
            let code = errno
            close(fd)
            throw TributaryError(.io, "cannot serve metrics on \(address) (\(String(cString: strerror(code))))", hint: "choose another port with metrics: HOST:PORT")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &socketAddress) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        self.port = UInt16(bigEndian: socketAddress.sin_port)
        self.host = host
        self.listener = fd
        Thread.detachNewThread {
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 {
                    if errno == EINTR { continue }
                    return
                }
                Self.answer(client, registry: registry, health: health)
            }
        }
    }

    /// Stops listening.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private static func answer(_ client: Int32, registry: PrometheusCollectorRegistry, health: PipelineStatusBoard?) {
        defer { close(client) }
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // Read the request head (the body, if any, is ignored).
        var request: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while request.count < 65_536 {
            let n = recv(client, &chunk, chunk.count, 0)
            if n <= 0 { return }
            request += chunk[0..<n]
            if request.count >= 4, String(decoding: request.suffix(4), as: UTF8.self) == "\r\n\r\n" { break }
        }
        let path = String(decoding: request.prefix { $0 != 0x0D }, as: UTF8.self).split(separator: " ").dropFirst().first ?? ""
        let status: String, type: String, body: [UInt8]
        if let health, path == "/healthz" || path.hasPrefix("/healthz?") {
            let report = health.health
            (status, type, body) = (report.healthy ? "200 OK" : "503 Service Unavailable", "text/plain; charset=utf-8", Array(report.text.utf8))
        } else {
            (status, type, body) = ("200 OK", "text/plain; version=0.0.4", registry.emitToBuffer())
        }
        let head = "HTTP/1.1 \(status)\r\nContent-Type: \(type)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        let bytes = Array(head.utf8) + body
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            offset += n
        }
    }
}

extension MetricsServer {
    /// Makes Prometheus the process's metrics backend and serves it on each distinct address,
    /// with `health`'s pipelines on `/healthz`; call once, before making runners. Returns the
    /// servers (none when `addresses` is empty, and then the backend is left alone).
    ///
    /// ```swift
    /// let servers = try MetricsServer.bootstrap(addresses: pipelines.compactMap(\.metricsAddress), health: board)
    /// ```
    static func bootstrap(addresses: [String], health: PipelineStatusBoard? = nil) throws -> [MetricsServer] {
        var unique: [String] = []
        for address in addresses where !unique.contains(address) { unique.append(address) }
        guard !unique.isEmpty else { return [] }
        let registry = PrometheusCollectorRegistry()
        let servers = try unique.map { try MetricsServer(address: $0, registry: registry, health: health) }
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return servers
    }
}
