import Foundation
import Synchronization
import Testing
import Tributary
import TributaryNATSSink
import TributaryPipeline
import TributaryStreams
import TributaryTestSupport

/// Order in the stream (issue 18's soak): a consumer reading a JetStream stream must see the
/// pipeline's positions strictly rising, with nothing skipped, however often the server dies
/// during delivery.
extension NATSSinkTests {
    @Test func serverKilledAndRestartedDuringDeliveryLeavesPositionsInOrder() async throws {
        let dir = TemporaryDirectory()
        let server = try NATSServer.start()
        defer { server.stop() }
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        try PipelineFixtures.insertPosts(store, count: 40_000, perTransaction: 20)
        let pipeline = try PipelineFixtures.pipeline("""
            name: order
            source: {store: s}
            sinks:
              - type: nats
                url: \(server.url)
                stream: ORDER
                timeout: 500ms
                batch_size: 100
            checkpoint: {records: 1000, seconds: 1s}
            retry: {initial: 10ms, max: 100ms}
            """)
        let runner = try PipelineRunner(pipeline: pipeline, coordinator: store, sinks: pipeline.sinks.map { PipelineRunner.makeSink($0) })
        // SIGKILLs the server six times while the stream grows, each time once it holds 5,000
        // more messages, and starts it again after a short pause.
        let chaos = ServerKiller(server, stream: "ORDER", every: 5_000, times: 6)
        while try await !runner.runOnce().caughtUp {}
        let kills = chaos.wait()
        while try await !runner.runOnce().caughtUp {}
        try await runner.finish()
        #expect(kills == 6, "the server was killed during delivery")

        let seen = try Self.messages(server.url, stream: "ORDER").map { try StreamPosition(parsing: $0.headers[NATSSink.positionHeader] ?? "") }
        let delivery = Soak.Delivery(seen: seen, expected: try PipelineFixtures.historyPositions(store))
        #expect(delivery.duplicates == 0 && delivery.gaps == 0 && delivery.unknown == 0, "each change once: \(delivery)")
        let backwards = zip(seen, seen.dropFirst()).enumerated().filter { $0.element.0 >= $0.element.1 }
        #expect(backwards.isEmpty, "positions rise strictly in the stream: \(backwards.count) steps back, first \(backwards.prefix(3).map { "\($0.element.0) then \($0.element.1) at \($0.offset)" })")
    }

    @Test func streamThatLostAcknowledgedRecordsStopsThePipelineInsteadOfPublishingAfterAGap() async throws {
        let dir = TemporaryDirectory()
        let server = try NATSServer.start()
        defer { server.stop() }
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        try PipelineFixtures.insertPosts(store, count: 300, perTransaction: 10)
        let pipeline = try PipelineFixtures.pipeline("""
            name: lost
            source: {store: s}
            sinks:
              - type: nats
                url: \(server.url)
                stream: LOST
                timeout: 500ms
            retry: {initial: 10ms, max: 100ms}
            """)
        let runner = try PipelineRunner(pipeline: pipeline, coordinator: store, sinks: pipeline.sinks.map { PipelineRunner.makeSink($0) })
        while try await !runner.runOnce().caughtUp {}
        #expect(try Self.messages(server.url, stream: "LOST").count == 300)
        // The server comes back without the records it acknowledged (as one whose file store
        // had not synced them would after a power cut): the stream is there, empty.
        server.kill()
        try server.restart()
        let admin = try NATSConnection(url: server.url, sink: "admin")
        try admin.deleteStream("LOST")
        try admin.addStream(NATSStreamConfig(name: "LOST", subjects: ["tributary.*"]))
        try PipelineFixtures.insertPosts(store, count: 100, from: 1_000, perTransaction: 10)
        await #expect {
            _ = try await runner.runOnce()
        } throws: { error in
            guard let error = error as? TributaryError else { return false }
            return error.code == .pipelineStopped && error.message.contains("no longer holds position 30.9") && error.hint?.contains("sync_interval") == true
        }
        #expect(try Self.messages(server.url, stream: "LOST").isEmpty, "nothing published after the gap")
        #expect(try store.historyConsumer(named: "lost").token.value == 30, "the consumer stays where the lost records were committed")
    }
}

/// Kills a NATS server on its own thread each time its stream has grown by `every`
/// messages, `times` times, starting it again after 50 to 300 ms.
private final class ServerKiller: Sendable {
    private let kills = Mutex(0)
    private let done = DispatchSemaphore(value: 0)

    init(_ server: LocalServer, stream: String, every: UInt64, times: Int) {
        Thread.detachNewThread { [self] in
            defer { done.signal() }
            guard let watcher = try? NATSConnection(url: server.url, sink: "watch", timeout: 0.5) else { return }
            for round in 1...times {
                let deadline = Date().addingTimeInterval(30)
                while (try? watcher.streamInfo(stream)?.messages ?? 0) ?? 0 < UInt64(round) * every, Date() < deadline { usleep(2_000) }
                server.kill()
                kills.withLock { $0 += 1 }
                usleep(useconds_t.random(in: 50_000...300_000))
                guard (try? server.restart()) != nil else { return }
            }
        }
    }

    /// Waits until the last round is over; returns how many times the server was killed.
    func wait() -> Int {
        done.wait()
        return kills.withLock { $0 }
    }
}
