import Foundation
import Testing
import Tributary
import TributaryTestSupport

/// Another program holding the source store's write lock past the busy timeout delays a
/// `tributary run`, and does not end it (issue 18: the soak's pipeline exited with "the store
/// stayed locked" while a writer held the lock, and its sinks stopped).
@Suite struct PipelineStoreBusyTests {
    @Test func aStoreLockedPastItsBusyTimeoutDelaysTheRunAndDoesNotEndIt() async throws {
        let dir = TemporaryDirectory()
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        _ = try PipelineFixtures.insertPosts(store, count: 10)
        let file = dir.path("p.yml")
        try """
            name: busy
            source:
              store: \(dir.path("s.sqlite"))
              consumer: busy
            sinks:
              - type: segments
                directory: \(dir.path("out"))
            """.write(toFile: file, atomically: true, encoding: .utf8)
        let log = dir.url.appendingPathComponent("run.log")
        let run = try TributaryProcess.start(["run", file], environment: [:], output: log)
        defer { if run.isRunning { kill(run.processIdentifier, SIGKILL) } }
        func consumer() -> Int64 { (try? store.historyConsumer(named: "busy").token.value) ?? -1 }
        var deadline = Date().addingTimeInterval(30)
        while consumer() < (try store.currentPersistentHistoryToken().value), Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }

        // Python commits a post (the run wakes and must fold it, which takes the write lock),
        // then holds the lock for 7 s, past the run's busy timeout of 5 s.
        let locker = Process()
        locker.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        locker.arguments = ["python3", "-c", """
            import sqlite3, sys, time
            db = sqlite3.connect(sys.argv[1], isolation_level=None)
            db.execute("INSERT INTO Post (title, externalID, createdAt, content) VALUES ('held', 'held', 0, 'x')")
            db.execute("BEGIN IMMEDIATE")
            time.sleep(7)
            db.execute("ROLLBACK")
            """, dir.path("s.sqlite")]
        try locker.run()
        locker.waitUntilExit()
        #expect(locker.terminationStatus == 0)

        let head = try store.currentPersistentHistoryToken().value
        deadline = Date().addingTimeInterval(30)
        while consumer() < head, Date() < deadline, run.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        let stillRunning = run.isRunning
        kill(run.processIdentifier, SIGTERM)
        run.waitUntilExit()
        let output = try String(contentsOf: log, encoding: .utf8)
        #expect(stillRunning, "the run ended: \(output.suffix(500))")
        #expect(run.terminationStatus == 0, "\(output.suffix(500))")
        #expect(consumer() == head, "the write made while the store was locked was delivered")
        #expect(output.contains("stayed locked"), "\(output.suffix(500))")
    }
}
