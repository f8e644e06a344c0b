import Testing

extension Tag {
    /// Tests that start real servers (nats-server, redis-server, PostgreSQL) on loopback.
    @Tag static var servers: Self
}
