import Foundation
import Testing
import Tributary
import TributaryTestSupport

/// The soak with faults (issue 18), for TRIBUTARY_SOAK_SECONDS (60 in `make test`, 600 in
/// `make soak`): four writers, two followers and a pipeline into PostgreSQL, Redis and NATS,
/// while a chaos loop SIGKILLs them and the servers (see `Support/Soak.swift`). At the end
/// every committed transaction is in the stream, the tail's output and each sink exactly
/// once and in order, history equals the data, the store passes `integrity_check`, no writer
/// saw BUSY, and the followers' and the pipeline's memory stayed flat. Prints one summary line.
///
/// It runs when TRIBUTARY_SOAK_SECONDS is set: `make test` runs it on its own after the rest of
/// the suite (its load would slow the timing-sensitive tests running beside it), `make soak`
/// for ten minutes; a plain `swift test` leaves it out.
@Suite(.serialized, .tags(.servers)) struct SoakTests {
    @Test(.enabled(if: Soak.isRequested, "set TRIBUTARY_SOAK_SECONDS (make test: 60, make soak: 600)"), .timeLimit(.minutes(45)))
    func writersFollowersAndAPipelineUnderKillsDeliverEveryTransactionOnce() throws {
        let watchdog = SoakWatchdog(limit: .seconds(Soak.seconds + 900))
        defer { watchdog.cancel() }
        let soak = try Soak(seconds: Soak.seconds)
        defer { soak.stop() }
        let stall = try soak.run()
        #expect(stall == nil, "\(stall.map { "\($0)" } ?? "")")

        let history = try soak.historyPositions()
        let changes = Dictionary(grouping: history, by: \.token).mapValues(\.count)
        let head = try soak.store.currentPersistentHistoryToken().value
        #expect(changes.count >= soak.seconds, "the writers committed \(changes.count) transactions in \(soak.seconds) s")

        let stream = Soak.Delivery(seen: try soak.streamPositions(), expected: history)
        #expect(stream.isExact, "stream: \(stream)")
        let verify = try TributaryProcess.run(["verify", soak.streamURL.path])
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        let nats = Soak.Delivery(seen: try soak.natsPositions(), expected: history)
        #expect(nats.isExact, "NATS: \(nats)")
        let (tail, redelivered, tailProblems) = try soak.tailDelivery(changes: changes)
        #expect(tail.isExact && tailProblems.isEmpty, "tail: \(tail) \(tailProblems.prefix(5))")

        try PostgresMirror.expectEqual(soak.postgres, soak.store, schema: "soak", entities: ["Post", "Tag"])
        #expect(try PostgresMirror.checkpoint(soak.postgres, schema: "soak", pipeline: "soak-postgres")?.hasPrefix("\(head).") == true)
        #expect(try RedisFixtures.objects(soak.redis.url) == RedisFixtures.storeObjects(soak.store), "Redis holds the store's posts")

        let (replayed, rows) = try soak.replayedAndStoreRows()
        let historyEqualsData = replayed == rows
        #expect(historyEqualsData, "history (the stream replayed) differs from the data: \(Set(rows).symmetricDifference(replayed).sorted().prefix(3))")
        #expect(try soak.integrityCheck() == "ok")

        let tallies = soak.writers.map(\.tally)
        let busy = tallies.flatMap(\.busy)
        #expect(busy.isEmpty, "BUSY reached a writer: \(busy.prefix(3))")
        #expect(tallies.flatMap(\.failures).isEmpty, "\(tallies.flatMap(\.failures).prefix(3))")
        for process in [soak.tail!, soak.export!, soak.pipeline!] {
            #expect(process.incarnations.last?.exitStatus == 0, "\(process.name) stopped with SIGTERM exits 0: \(soak.log(process).suffix(1_000))")
        }
        let events = soak.events.withLock { $0 }
        #expect(events.problems.isEmpty, "\(events.problems)")
        let kills = events.kills.values.reduce(0, +)
        #expect(kills >= soak.seconds / 6, "the chaos loop killed \(kills) processes")
        let memory = soak.memory()
        #expect(memory.growth.values.allSatisfy { $0 <= 24 }, "memory grew (MB, second half of a run over its first): \(memory.growth)")

        let duplicates = stream.duplicates + nats.duplicates + tail.duplicates
        let gaps = stream.gaps + nats.gaps + tail.gaps
        let killed = events.kills.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        let growth = memory.growth.sorted { $0.key < $1.key }.map { "\($0.key) \(String(format: "%+.1f", $0.value))" }.joined(separator: ", ")
        print("soak: \(soak.seconds) s, \(changes.count) transactions (\(history.count) changes, \(tallies.map(\.runs).reduce(0, +)) writer runs), "
              + "kills \(kills) (\(killed)), restarts \(events.restarts), duplicates \(duplicates), gaps \(gaps), "
              + "tail redelivered after kills \(redelivered), BUSY \(busy.count), peak RSS \(String(format: "%.1f", memory.peakMB)) MB (\(memory.peakOf)), "
              + "RSS growth MB (\(growth))")
    }
}
