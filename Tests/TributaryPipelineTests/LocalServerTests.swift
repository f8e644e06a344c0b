import Foundation
import Testing
import TributaryTestSupport

/// The test harness's servers start on loopback, answer their own protocol, survive a kill
/// and restart on the same port, and go away when stopped.
@Suite(.tags(.servers)) struct LocalServerTests {
    /// Sends `request` (nothing when empty) and returns the first bytes the server answers.
    private func exchange(_ port: Int, _ request: String?) throws -> String {
        try #require(FreePort.request(request ?? "", to: port))
    }

    @Test func natsAnswersWithJetStreamAndRestarts() throws {
        let nats = try NATSServer.start()
        defer { nats.stop() }
        #expect(nats.url == "nats://127.0.0.1:\(nats.port)")
        let info = try exchange(nats.port, nil)
        #expect(info.hasPrefix("INFO "))
        #expect(info.contains("\"jetstream\":true"))
        nats.kill()
        #expect(!FreePort.accepts(nats.port))
        try nats.restart()
        #expect(try exchange(nats.port, nil).hasPrefix("INFO "))
    }

    @Test func redisAnswersAndKeepsDataAcrossARestart() throws {
        let redis = try RedisServer.start(appendOnly: true)
        let directory = redis.directory
        #expect(try exchange(redis.port, "PING\r\n") == "+PONG\r\n")
        #expect(try exchange(redis.port, "SET k v\r\n") == "+OK\r\n")
        redis.kill()
        try redis.restart()
        #expect(try exchange(redis.port, "GET k\r\n") == "$1\r\nv\r\n")
        redis.stop()
        #expect(!FileManager.default.fileExists(atPath: directory.path))
        #expect(!FreePort.accepts(redis.port))
    }

    @Test func postgresAcceptsConnections() throws {
        let postgres = try PostgresServer.start()
        defer { postgres.stop() }
        #expect(postgres.url == "postgres://tributary@127.0.0.1:\(postgres.port)/postgres")
        // An SSLRequest packet: a server that speaks PostgreSQL's protocol answers 'N' (no TLS).
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(postgres.port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        try #require(connected == 0)
        let request: [UInt8] = [0, 0, 0, 8, 0x04, 0xD2, 0x16, 0x2F]
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, 8, 0) }
        var reply: UInt8 = 0
        #expect(recv(fd, &reply, 1, 0) == 1)
        #expect(reply == UInt8(ascii: "N"))
    }
}
