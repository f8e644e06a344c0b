import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A small HTTP/1.1 server on loopback, on a free port, for the HTTP sink's tests: it counts
/// idempotency keys and record IDs (a repeated key is answered 200 and not counted again, as
/// an idempotent endpoint would), and can answer 503 for a number of requests or 400 to all.
final class TestHTTPServer: Sendable {
    struct State {
        var requests = 0
        var keys: [String: Int] = [:]
        var recordIDs: [String] = []
        var authorizations: Set<String> = []
        var unavailableLeft = 0
        var rejectAll = false
        var bodies: [String] = []
        /// Every request's idempotency key and body, refused ones included.
        var attempts: [(key: String, body: [UInt8])] = []
    }

    let state = Mutex(State())
    let port: UInt16
    private let listener: Int32

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, listen(fd, 64) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        port = UInt16(bigEndian: address.sin_port)
        listener = fd
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 { return }
                Thread.detachNewThread { [self] in serve(client) }
            }
        }
    }

    var url: String { "http://127.0.0.1:\(port)/hook" }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func serve(_ client: Int32) {
        defer { close(client) }
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            // Headers.
            var headerEnd: Int?
            while headerEnd == nil {
                if let range = Self.find([13, 10, 13, 10], in: buffer) { headerEnd = range; break }
                let n = recv(client, &chunk, chunk.count, 0)
                if n <= 0 { return }
                buffer += chunk[0..<n]
            }
            let head = String(decoding: buffer[0..<headerEnd!], as: UTF8.self)
            var headers: [String: String] = [:]
            for line in head.components(separatedBy: "\r\n").dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            let length = Int(headers["content-length"] ?? "0") ?? 0
            let bodyStart = headerEnd! + 4
            while buffer.count < bodyStart + length {
                let n = recv(client, &chunk, chunk.count, 0)
                if n <= 0 { return }
                buffer += chunk[0..<n]
            }
            let body = Array(buffer[bodyStart..<(bodyStart + length)])
            buffer.removeFirst(bodyStart + length)
            let (status, text) = handle(headers: headers, body: body)
            let reason = status == 200 ? "OK" : status == 400 ? "Bad Request" : "Service Unavailable"
            let response = "HTTP/1.1 \(status) \(reason)\r\nContent-Type: application/json\r\nContent-Length: \(text.utf8.count)\r\n\r\n\(text)"
            let bytes = Array(response.utf8)
            var offset = 0
            while offset < bytes.count {
                let n = bytes[offset...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if n <= 0 { return }
                offset += n
            }
        }
    }

    private func handle(headers: [String: String], body: [UInt8]) -> (Int, String) {
        state.withLock { state in
            state.requests += 1
            state.attempts.append((headers["idempotency-key"] ?? "", body))
            if let authorization = headers["authorization"] { state.authorizations.insert(authorization) }
            if state.rejectAll { return (400, #"{"error":"the endpoint refuses this batch"}"#) }
            if state.unavailableLeft > 0 {
                state.unavailableLeft -= 1
                return (503, #"{"error":"try later"}"#)
            }
            let key = headers["idempotency-key"] ?? ""
            state.keys[key, default: 0] += 1
            if state.keys[key]! > 1 { return (200, #"{"duplicate":true}"#) }
            state.bodies.append(String(decoding: body, as: UTF8.self))
            if let json = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any], let records = json["records"] as? [[String: Any]] {
                state.recordIDs += records.compactMap { $0["id"] as? String }
            }
            return (200, #"{"ok":true}"#)
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] && Array(haystack[i..<(i + needle.count)]) == needle { return i }
        return nil
    }
}
