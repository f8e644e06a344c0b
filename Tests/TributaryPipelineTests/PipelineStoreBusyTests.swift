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
        try PipelineFixtures.insertPosts(store, count: 10)
        let server = try TestHTTPServer()
        defer { server.stop() }
        let file = dir.path("p.yml")
        try "name: busy\nsource: {store: \(dir.path("s.sqlite")), consumer: busy}\nsinks:\n  - type: http\n    url: \(server.url)\nretry: {initial: 50ms, max: 200ms}\n"
            .write(toFile: file, atomically: true, encoding: .utf8)
        let log = dir.url.appendingPathComponent("run.log")
        let run = try TributaryProcess.start(["run", file], environment: [:], output: log)
        defer { if run.isRunning { kill(run.processIdentifier, SIGKILL) } }
        func consumer() -> Int64 { (try? store.historyConsumer(named: "busy").token.value) ?? -1 }
        func output() -> String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
        func wait(_ seconds: Double, until condition: () throws -> Bool) async throws {
            let deadline = Date().addingTimeInterval(seconds)
            while try !condition(), Date() < deadline, run.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        }
        try await wait(60) { consumer() == (try store.currentPersistentHistoryToken().value) }

        // New posts the endpoint refuses for now, so the run holds them undelivered; then
        // Python takes the write lock and keeps it until told; then the endpoint takes them,
        // and the run's checkpoint finds the store locked past its busy timeout of 5 s.
        let served = server.state.withLock { state in
            state.unavailableLeft = 1_000_000
            return state.requests
        }
        try PipelineFixtures.insertPosts(store, count: 5, from: 100)
        let head = try store.currentPersistentHistoryToken().value
        try await wait(60) { server.state.withLock { $0.requests } > served }
        let release = dir.path("release")
        let locker = Process()
        locker.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        locker.arguments = ["python3", "-c", """
            import os, sqlite3, sys, time
            db = sqlite3.connect(sys.argv[1], isolation_level=None)
            db.execute("BEGIN IMMEDIATE")
            print("locked", flush=True)
            deadline = time.time() + 120
            while not os.path.exists(sys.argv[2]) and time.time() < deadline:
                time.sleep(0.02)
            db.execute("ROLLBACK")
            """, dir.path("s.sqlite"), release]
        let lockerOutput = Pipe()
        locker.standardOutput = lockerOutput
        try locker.run()
        defer { if locker.isRunning { kill(locker.processIdentifier, SIGKILL) } }
        _ = lockerOutput.fileHandleForReading.availableData   // "locked"
        server.state.withLock { $0.unavailableLeft = 0 }
        try await wait(120) { output().contains("stayed locked") }
        _ = FileManager.default.createFile(atPath: release, contents: nil)
        locker.waitUntilExit()

        try await wait(60) { consumer() == head }
        let stillRunning = run.isRunning
        kill(run.processIdentifier, SIGTERM)
        run.waitUntilExit()
        #expect(stillRunning, "the run ended: \(output().suffix(500))")
        #expect(run.terminationStatus == 0, "\(output().suffix(500))")
        #expect(output().contains("stayed locked"), "\(output().suffix(500))")
        #expect(consumer() == head, "the posts delivered while the store was locked were committed once it was free")
    }
}
