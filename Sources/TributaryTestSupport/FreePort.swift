import Foundation
import Synchronization

/// Free TCP ports on loopback.
///
/// ```swift
/// let port = try FreePort.next()
/// ```
public enum FreePort {
    /// A port nothing listens on now (the kernel's choice for port 0), distinct from the
    /// ports this process handed out before.
    public static func next() throws -> Int {
        for _ in 0..<50 {
            let port = try kernelChoice()
            if handedOut.withLock({ $0.insert(port).inserted }) { return port }
        }
        throw LocalServerError("no free loopback port")
    }

    /// A loopback port that refuses connections for as long as the reservation lives: held
    /// bound without listening, so no server of another test can take it meanwhile (a port
    /// from ``next()`` was once taken by another test's HTTP server, which answered 200).
    ///
    /// ```swift
    /// let closed = try FreePort.refusing()
    /// defer { withExtendedLifetime(closed) {} }
    /// let url = "http://127.0.0.1:\(closed.port)/h"
    /// ```
    public static func refusing() throws -> Reservation {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw LocalServerError("socket failed: errno \(errno)") }
        var address = loopback(0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            close(fd)
            throw LocalServerError("bind failed: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Reservation(port: Int(UInt16(bigEndian: address.sin_port)), descriptor: fd)
    }

    /// A port held bound (not listening) until released.
    public final class Reservation: Sendable {
        public let port: Int
        private let descriptor: Int32

        init(port: Int, descriptor: Int32) {
            self.port = port
            self.descriptor = descriptor
        }

        deinit { close(descriptor) }
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    public static func accepts(_ port: Int) -> Bool {
        guard let fd = connected(port) else { return false }
        close(fd)
        return true
    }

    /// Connects to 127.0.0.1:`port`, sends `text` and returns the server's first answer (up
    /// to 4 KB), nil when nothing answers.
    ///
    /// ```swift
    /// let ready = FreePort.request("PING\r\n", to: port) == "+PONG\r\n"
    /// ```
    public static func request(_ text: String, to port: Int) -> String? {
        guard let fd = connected(port) else { return nil }
        defer { close(fd) }
        _ = text.withCString { Glibc.send(fd, $0, strlen($0), 0) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        return count > 0 ? String(decoding: buffer.prefix(count), as: UTF8.self) : nil
    }

    /// Connects to 127.0.0.1:`port`, sends `text` and closes (for a server's shutdown command).
    public static func send(_ text: String, to port: Int) {
        _ = request(text, to: port)   // the server closes the connection as it shuts down
    }

    /// A socket connected to 127.0.0.1:`port`, nil when nothing accepts there.
    private static func connected(_ port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = loopback(port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        if !connected { close(fd) }
        return connected ? fd : nil
    }

    private static let handedOut = Mutex<Set<Int>>([])

    private static func kernelChoice() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw LocalServerError("socket failed: errno \(errno)") }
        defer { close(fd) }
        var address = loopback(0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw LocalServerError("bind failed: errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func loopback(_ port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
