import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A minimal HTTP/1.1 endpoint on loopback for the HTTP sink's benchmarks: answers 200 to
/// every POST (keep-alive), noting when each record ID (the `"id":"…"` fields) arrived.
final class BenchHTTPServer: Sendable {
    struct State {
        var requests = 0
        var bytes = 0
        var arrivals: [String: ContinuousClock.Instant] = [:]
        var trackArrivals = false
    }

    let state = Mutex(State())
    let port: UInt16
    private let listener: Int32

    init() {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        listen(fd, 64)
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

    var url: URL { URL(string: "http://127.0.0.1:\(port)/hook")! }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func serve(_ client: Int32) {
        defer { close(client) }
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let marker = Array("\r\n\r\n".utf8)
        while true {
            var headerEnd: Int?
            while headerEnd == nil {
                if buffer.count >= 4 {
                    for i in 0...(buffer.count - 4) where buffer[i] == 13 && Array(buffer[i..<(i + 4)]) == marker { headerEnd = i; break }
                }
                if headerEnd != nil { break }
                let n = recv(client, &chunk, chunk.count, 0)
                if n <= 0 { return }
                buffer += chunk[0..<n]
            }
            let head = String(decoding: buffer[0..<headerEnd!], as: UTF8.self).lowercased()
            var length = 0
            for line in head.components(separatedBy: "\r\n") where line.hasPrefix("content-length:") {
                length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0
            }
            let start = headerEnd! + 4
            while buffer.count < start + length {
                let n = recv(client, &chunk, chunk.count, 0)
                if n <= 0 { return }
                buffer += chunk[0..<n]
            }
            let now = ContinuousClock.now
            let body = buffer[start..<(start + length)]
            state.withLock { state in
                state.requests += 1
                state.bytes += length
                if state.trackArrivals {
                    let text = String(decoding: body, as: UTF8.self)
                    var rest = Substring(text)
                    while let range = rest.range(of: #"{"id":""#) {
                        rest = rest[range.upperBound...]
                        if let end = rest.firstIndex(of: "\"") { state.arrivals[String(rest[..<end])] = now }
                    }
                }
            }
            buffer.removeFirst(start + length)
            let response = Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8)
            _ = response.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
    }
}
