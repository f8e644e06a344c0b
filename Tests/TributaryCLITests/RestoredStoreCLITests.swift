import Foundation
import Testing

/// A store put back from an older copy (`sqlite3 DB ".restore old.db"`) hands out the tokens
/// it had handed out again, to other transactions. Before the fix, an export resumed past
/// them and a follower waited for tokens past its position: the new transactions were
/// skipped without a word, and `verify` said ok. Now both stop with one line.
@Suite(.serialized) struct RestoredStoreCLITests {
    let scratch = Scratch()

    /// An adopted database with one row, its path.
    func adopted() throws -> String {
        let db = scratch.path("app.db")
        #expect(try CLI.sqlite3(db, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'a');").status == 0)
        #expect(try CLI.run(["adopt", db]).status == 0)
        return db
    }

    func insert(_ db: String, _ id: Int) throws {
        #expect(try CLI.sqlite3(db, "INSERT INTO t VALUES (\(id), 'v\(id)');").status == 0)
    }

    @Test func anExportOfAStorePutBackFromAnOlderCopyStopsWithOneLine() throws {
        let db = try adopted()
        let stream = scratch.path("stream")
        #expect(try CLI.run(["export", db, "--to", stream, "--snapshot"]).status == 0)
        try insert(db, 2)
        #expect(try CLI.run(["export", db, "--to", stream]).status == 0)
        #expect(try CLI.sqlite3(db, ".backup '\(scratch.path("old.db"))'").status == 0)
        try insert(db, 3)
        try insert(db, 4)
        #expect(try CLI.run(["export", db, "--to", stream]).status == 0)
        let manifest = try Data(contentsOf: URL(fileURLWithPath: stream).appendingPathComponent("manifest.json"))
        #expect(try CLI.sqlite3(db, ".restore '\(scratch.path("old.db"))'").status == 0)
        try insert(db, 5)
        try insert(db, 6)
        let stopped = try CLI.run(["export", db, "--to", stream])
        #expect(stopped.status != 0)
        let lines = stopped.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("differs from what the stream in") && lines[0].contains("restored from a backup?"), "\(stopped.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: stream).appendingPathComponent("manifest.json")) == manifest, "nothing written")
    }

    @Test func followingAStorePutBackFromAnOlderCopyEndsWithOneLine() async throws {
        let db = try adopted()
        #expect(try CLI.sqlite3(db, ".backup '\(scratch.path("old.db"))'").status == 0)
        let tail = try FollowingProcess(["tail", db, "-n", "0", "--follow"], errorsToo: true)
        defer { if tail.isRunning { tail.signal(SIGKILL) } }
        try await Task.sleep(for: .milliseconds(300))
        try insert(db, 2)
        #expect(await Wait.until { tail.lines.contains { $0.contains("insert t/p2") } }, "printed: \(tail.lines)")
        #expect(try CLI.sqlite3(db, ".restore '\(scratch.path("old.db"))'").status == 0)
        try insert(db, 5)
        #expect(await Wait.until(.seconds(20)) { !tail.isRunning }, "still following: \(tail.lines)")
        if tail.isRunning { tail.signal(SIGKILL) }
        #expect(tail.waitForExit() != 0)
        // Seen before the insert is read (the head behind the position) or after (another transaction at the position).
        let stops = tail.lines.filter { $0.contains("restored from a backup?") && ($0.contains("before token 1,") || $0.contains("differs from what this watcher recorded there")) }
        #expect(stops.count == 1 && !tail.lines.contains { $0.contains("retrying") }, "\(tail.lines)")
        #expect(!tail.lines.contains { $0.contains("insert t/p5") }, "\(tail.lines)")
    }

    @Test func anExportPastTheStoresNewestTokenStopsWithOneLine() async throws {
        let db = try adopted()
        #expect(try CLI.sqlite3(db, ".backup '\(scratch.path("old.db"))'").status == 0)
        let stream = scratch.path("stream")
        try insert(db, 2)
        try insert(db, 3)
        #expect(try CLI.run(["export", db, "--to", stream]).status == 0)
        #expect(try CLI.sqlite3(db, ".restore '\(scratch.path("old.db"))'").status == 0)
        let stopped = try CLI.run(["export", db, "--to", stream])
        #expect(stopped.status != 0 && stopped.stderr.contains("before token") && stopped.stderr.contains("replaced by an older copy"), "\(stopped.stderr)")
    }

    /// Before the fix, `run` and `export --to - --follow` waited for a token past the one they
    /// had delivered through, so the transactions the restored store numbered up to it never
    /// reached them, without a word.
    @Test(arguments: ["run", "export"]) func aFollowingCommandAcrossAStorePutBackFromAnOlderCopyEndsWithOneLine(command: String) async throws {
        let db = try adopted()
        let pipeline = scratch.write("p.yml", """
            name: p
            source:
              store: \(db)
              consumer: p
            sinks:
              - type: stdout
            checkpoint:
              records: 1
              seconds: 1s
            """)
        #expect(try CLI.sqlite3(db, ".backup '\(scratch.path("old.db"))'").status == 0)
        let following = try FollowingProcess(command == "run" ? ["run", pipeline] : ["export", db, "--to", "-", "--follow"], errorsToo: true)
        defer { if following.isRunning { following.signal(SIGKILL) } }
        try await Task.sleep(for: .milliseconds(300))
        for id in 2...4 { try insert(db, id) }
        #expect(await Wait.until { following.lines.contains { $0.contains("v4") } }, "printed: \(following.lines)")
        #expect(try CLI.sqlite3(db, ".restore '\(scratch.path("old.db"))'").status == 0)
        #expect(await Wait.until(.seconds(20)) { !following.isRunning }, "still following: \(following.lines)")
        for id in 5...7 { try insert(db, id) }
        if following.isRunning { following.signal(SIGKILL) }
        #expect(following.waitForExit() != 0)
        #expect(following.lines.filter { $0.contains("restored from a backup?") }.count == 1, "\(following.lines)")
        #expect(!following.lines.contains { $0.contains("v5") || $0.contains("v6") }, "\(following.lines)")
    }

    /// A pipeline stopped while its store is put back from an older copy: its consumer goes
    /// back with the store, but its sinks keep their positions, and before the fix they took
    /// the transactions the restored store numbered up to them for ones they held, and
    /// skipped them (`run --once` said ok). Now the run stops with one line naming the sink:
    /// the sink's position past the store's newest token, or, once the store's writers have
    /// passed it, the chain hash the sink kept at its last transaction.
    @Test(arguments: [(0, "segments"), (3, "segments"), (0, "fts"), (3, "fts")])
    func aPipelineWhoseSinkIsAheadOfAStorePutBackFromAnOlderCopyStopsWithOneLine(insertsAfterRestore: Int, sink: String) throws {
        let db = try adopted()
        let sinkSettings = sink == "segments" ? "type: segments\n    directory: \(scratch.path("segments"))" : "type: fts\n    path: \(scratch.path("index.sqlite"))\n    entities: {t: [v]}"
        let pipeline = scratch.write("p.yml", "name: p\nsource:\n  store: \(db)\n  consumer: p\nsinks:\n  - \(sinkSettings)\n")
        #expect(try CLI.sqlite3(db, ".backup '\(scratch.path("old.db"))'").status == 0)
        for id in 2...4 { try insert(db, id) }
        let first = try CLI.run(["run", pipeline, "--once"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(try CLI.sqlite3(db, ".restore '\(scratch.path("old.db"))'").status == 0)
        for id in 10..<(10 + insertsAfterRestore) { try insert(db, id) }
        let stopped = try CLI.run(["run", pipeline, "--once"])
        let lines = stopped.stderrLines.filter { !$0.hasPrefix("pipeline p: new consumer") }
        let reason = insertsAfterRestore == 0 ? "before token 1, which sink \(sink) has delivered" : "differs from what sink \(sink) recorded there"
        #expect(stopped.status != 0 && lines.count == 1, "\(stopped.stdout) \(stopped.stderr)")
        #expect(lines.first?.contains(reason) == true && lines.first?.contains("restored from a backup?") == true, "\(stopped.stderr)")
    }
}
