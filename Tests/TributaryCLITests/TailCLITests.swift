import Foundation
import Synchronization
import Testing

/// `tributary tail`: the last N transactions, a consumer's pending ones, and `--follow`
/// ended by SIGTERM or killed and restarted.
@Suite struct TailCLITests {
    let scratch = Scratch()

    func makeStore() throws -> String { try CLI.makeBlogStore(at: scratch.path("t.sqlite")) }

    /// Imports posts `range`, one transaction each.
    func importPosts(_ store: String, _ range: Range<Int>, author: String = "importer") throws {
        let lines = range.map { #"{"externalID": "ext-\#($0)", "title": "Post \#($0)", "createdAt": \#($0)}"# }.joined(separator: "\n") + "\n"
        let result = try CLI.run(["import", store, "--entity", "Post", "--batch-size", "1", "--author", author, "-"], stdin: lines)
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// The token values of NDJSON transaction lines.
    func tokens(_ lines: [String]) -> [Int] {
        lines.compactMap { line in
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return (object?["token"] as? String)?.split(separator: "-").first.flatMap { Int($0) }
        }
    }

    /// A consumer's token value, from `consumers list --json`.
    func consumerToken(_ store: String, _ name: String) throws -> Int? {
        let list = try CLI.run(["consumers", store, "list", "--json"])
        let line = list.stdoutLines.first { $0.contains(#""name":"\#(name)""#) }
        return line.map { tokens([$0]) }?.first
    }

    @Test func printsTheLastNMatchingTransactions() throws {
        let store = try makeStore()
        try importPosts(store, 0..<5)
        try importPosts(store, 5..<6, author: "other")
        let last = try CLI.run(["tail", store, "-n", "2", "--json"])
        #expect(last.status == 0, "\(last.stderr)")
        #expect(tokens(last.stdoutLines) == [5, 6])
        #expect(tokens(try CLI.run(["tail", store, "--json", "--author", "importer"]).stdoutLines) == [1, 2, 3, 4, 5])
        let update = try CLI.run(["update", store, "--entity", "Post", "--where", "externalID == 'ext-1'", "--set", "title=Renamed"])
        #expect(update.status == 0, "\(update.stderr)")
        let table = try CLI.run(["tail", store, "-n", "1"])
        #expect(table.stdout.contains(#"title: "Post 1"  →  "Renamed""#))
    }

    @Test func aConsumerPrintsWhatCameAfterItAndCommits() throws {
        let store = try makeStore()
        try importPosts(store, 0..<2)
        // A new consumer starts at the current token.
        let first = try CLI.run(["tail", store, "--consumer", "audit", "--json"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.isEmpty)
        try importPosts(store, 2..<5)
        #expect(tokens(try CLI.run(["tail", store, "--consumer", "audit", "--json"]).stdoutLines) == [3, 4, 5])
        #expect(try consumerToken(store, "audit") == 5)
        #expect(try CLI.run(["tail", store, "--consumer", "audit", "--json"]).stdout.isEmpty)
    }

    @Test func badOptionsFailWithAClearLine() throws {
        let store = try makeStore()
        let through = try CLI.run(["tail", store, "--follow", "--through", "1-00000000"])
        #expect(through.status != 0)
        #expect(through.stderr.contains("--through cannot be combined with --follow"))
        let both = try CLI.run(["tail", store, "--consumer", "c", "--after", "1-00000000"])
        #expect(both.status != 0)
        #expect(both.stderr.contains("leave out --after"))
        let noHistory = scratch.path("plain.sqlite")
        try CLI.run(["init", noHistory, "--model", CLI.blogModel])
        let plain = try CLI.run(["tail", noHistory])
        #expect(plain.status != 0)
        #expect(plain.stderrLines.count == 1)
        #expect(plain.stderr.contains("does not track history"))
    }

    @Test func anExpiredConsumerEndsTailWithTheWayOut() throws {
        let store = try makeStore()
        try CLI.run(["consumers", store, "add", "slow"])
        try importPosts(store, 0..<3)
        let token = try CLI.run(["token", store]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let prune = try CLI.run(["prune", store, "--before", token])
        #expect(prune.status == 0, "\(prune.stderr)")
        for arguments in [["tail", store, "--consumer", "slow"], ["tail", store, "--consumer", "slow", "--follow"]] {
            let result = try CLI.run(arguments)
            #expect(result.status != 0)
            #expect(result.stderrLines.count == 1, "\(result.stderr)")
            #expect(result.stderr.contains("was pruned"), "\(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
    }

    @Test func followEndsCleanlyOnSIGTERMWithTheConsumerCommitted() async throws {
        let store = try makeStore()
        try importPosts(store, 0..<1)
        let tail = try FollowingProcess(["tail", store, "--follow", "--consumer", "live", "--json"])
        #expect(try await Wait.until { try consumerToken(store, "live") == 1 })
        try importPosts(store, 1..<4)
        #expect(await Wait.until { tokens(tail.lines) == [2, 3, 4] }, "printed: \(tail.lines)")
        tail.signal(SIGTERM)
        #expect(tail.waitForExit() == 0)
        #expect(try consumerToken(store, "live") == 4)
    }

    @Test func followWithoutAConsumerPrintsTheLastThenWhatCommits() async throws {
        let store = try makeStore()
        try importPosts(store, 0..<4)
        let tail = try FollowingProcess(["tail", store, "-n", "2", "--follow", "--json", "--exclude-author", "bot"])
        #expect(await Wait.until { tokens(tail.lines) == [3, 4] }, "printed: \(tail.lines)")
        try importPosts(store, 4..<5, author: "bot")
        try importPosts(store, 5..<7)
        #expect(await Wait.until { tokens(tail.lines) == [3, 4, 6, 7] }, "printed: \(tail.lines)")
        tail.signal(SIGINT)
        #expect(tail.waitForExit() == 0)
        #expect(try consumerToken(store, "bot") == nil)  // no consumer was made
    }

    @Test func followKilledAndRestartedResumesWithoutGapOrDuplicate() async throws {
        let store = try makeStore()
        let first = try FollowingProcess(["tail", store, "--follow", "--consumer", "k", "--json"])
        #expect(try await Wait.until { try consumerToken(store, "k") == 0 })
        try importPosts(store, 0..<3)
        #expect(await Wait.until { tokens(first.lines) == [1, 2, 3] }, "printed: \(first.lines)")
        #expect(try await Wait.until { try consumerToken(store, "k") == 3 })
        first.signal(SIGKILL)
        #expect(first.waitForExit() == SIGKILL)
        try importPosts(store, 3..<5)  // committed while no tail runs
        let second = try FollowingProcess(["tail", store, "--follow", "--consumer", "k", "--json"])
        #expect(await Wait.until { tokens(second.lines) == [4, 5] }, "printed: \(second.lines)")
        try importPosts(store, 5..<6)
        #expect(await Wait.until { tokens(second.lines) == [4, 5, 6] }, "printed: \(second.lines)")
        second.signal(SIGINT)
        #expect(second.waitForExit() == 0)
        #expect(tokens(first.lines) + tokens(second.lines) == Array(1...6))
    }
}

/// A `tributary` process left running, its standard output collected as it comes.
final class FollowingProcess: Sendable {
    private let process: Process
    private let output = Mutex("")
    private let finished = DispatchSemaphore(value: 0)

    /// With `errorsToo`, what it writes to standard error is in ``lines`` too.
    init(_ arguments: [String], errorsToo: Bool = false) throws {
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = errorsToo ? out : FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        self.process = process
        let reader = out.fileHandleForReading
        Thread { [self] in
            while true {
                let data = reader.availableData
                if data.isEmpty { break }
                append(data)
            }
            finished.signal()
        }.start()
    }

    private func append(_ data: Data) { output.withLock { $0 += String(decoding: data, as: UTF8.self) } }

    /// The complete lines printed so far.
    var lines: [String] {
        output.withLock { text in
            var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            lines.removeLast()  // the part after the last newline
            return lines.filter { !$0.isEmpty }
        }
    }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    var isRunning: Bool { process.isRunning }

    /// Waits for the process to end; its exit status, or the signal that killed it.
    func waitForExit() -> Int32 {
        process.waitUntilExit()
        finished.wait()
        return process.terminationStatus
    }
}

enum Wait {
    /// Polls `condition` until it holds or `timeout` passes; returns whether it held. The
    /// deadline is long because only a failing test pays it, and a full run on two loaded
    /// cores can keep a process from its next step for many seconds.
    static func until(_ timeout: Duration = .seconds(60), _ condition: () throws -> Bool) async rethrows -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return try condition()
    }
}

extension TailCLITests {
    /// A write by a program that does not use Tributary (the sqlite3 shell) wakes `tail
    /// --follow`, which prints it with its before and after values (issue 22).
    @Test func followPrintsWhatTheSQLiteShellWrites() async throws {
        let store = try makeStore()
        try importPosts(store, 0..<2)
        let tail = try FollowingProcess(["tail", store, "-n", "0", "--follow", "--json"])
        try await Task.sleep(for: .milliseconds(300))
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        shell.arguments = [store, "UPDATE Post SET title = 'From the shell' WHERE externalID = 'ext-1'"]
        try shell.run()
        shell.waitUntilExit()
        #expect(shell.terminationStatus == 0)
        #expect(await Wait.until { tail.lines.contains { $0.contains("From the shell") } }, "printed: \(tail.lines)")
        let line = try #require(tail.lines.first { $0.contains("From the shell") })
        #expect(line.contains(#""before":"Post 1""#) && line.contains(#""after":"From the shell""#), "\(line)")
        #expect(line.contains(#""processName":"foreign""#), "\(line)")
        tail.signal(SIGINT)
        #expect(tail.waitForExit() == 0)
    }
}

extension TailCLITests {
    /// Before the fix, `tributary adopt` run again (after another program added a column)
    /// left a running `tail --follow` retrying "another process changed the store's model"
    /// every few seconds forever, printing nothing more and holding its pin on the
    /// write-ahead log, which then grew without bound. It now ends with that one line.
    @Test func followEndsWithOneLineWhenTheStoreIsAdoptedAgain() async throws {
        let scratch = Scratch()
        let db = scratch.path("app.db")
        #expect(try CLI.sqlite3(db, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'a');").status == 0)
        #expect(try CLI.run(["adopt", db]).status == 0)
        let tail = try FollowingProcess(["tail", db, "-n", "0", "--follow"], errorsToo: true)
        try await Task.sleep(for: .milliseconds(300))
        #expect(try CLI.sqlite3(db, "ALTER TABLE t ADD COLUMN w INTEGER; INSERT INTO t VALUES (2, 'b', 2);").status == 0)
        #expect(await Wait.until { tail.lines.contains { $0.contains("insert t/p2") } }, "printed: \(tail.lines)")
        #expect(try CLI.run(["adopt", db]).status == 0)
        #expect(try CLI.sqlite3(db, "INSERT INTO t VALUES (3, 'c', 3);").status == 0)
        #expect(await Wait.until(.seconds(20)) { !tail.isRunning }, "still following: \(tail.lines)")
        if tail.isRunning { tail.signal(SIGKILL) }
        #expect(tail.waitForExit() != 0)
        let errors = tail.lines.filter { $0.contains("another process changed the store's model") }
        #expect(errors.count == 1 && !tail.lines.contains { $0.contains("retrying") }, "\(tail.lines)")
    }
}
