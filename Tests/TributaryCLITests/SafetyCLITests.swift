import Foundation
import Testing
import TributaryTestSupport

/// Safe defaults of the writing commands: a batch write names its rows, dry runs write
/// nothing, NULL has its own option, consumers start and move where they are told.
@Suite struct SafetyCLITests {
    let scratch = Scratch()

    func makeStore(history: Bool = true) throws -> String {
        let store = scratch.path("s.sqlite")
        let result = try CLI.run(["init", store, "--model", CLI.blogModel] + (history ? ["--history"] : []))
        #expect(result.status == 0, "\(result.stderr)")
        return store
    }

    func posts(_ range: Range<Int>) -> String {
        range.map { #"{"externalID": "ext-\#($0)", "title": "Post \#($0)", "content": "body", "createdAt": \#($0)}"# }.joined(separator: "\n") + "\n"
    }

    func count(_ store: String, _ predicate: String? = nil) throws -> String {
        try CLI.run(["count", store, "--entity", "Post"] + (predicate.map { ["--where", $0] } ?? [])).stdout
    }

    func json(_ line: String) throws -> [String: Any] { try CLI.json(line) }

    func token(_ store: String) throws -> String {
        try CLI.run(["token", store]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func updateAndDeleteNameTheirRows() throws {
        let store = try makeStore()
        try CLI.run(["import", store, "--entity", "Post", "-"], stdin: posts(0..<3))
        let unscoped = try CLI.run(["update", store, "--entity", "Post", "--set", "content=x"])
        #expect(unscoped.status != 0)
        #expect(unscoped.stderr.contains("give --where PREDICATE, or --all to update every row"), "\(unscoped.stderr)")
        #expect(try count(store, "content == 'x'") == "0\n")
        for verb in ["update", "delete"] {
            let both = try CLI.run([verb, store, "--entity", "Post", "--all", "--where", "title == 'Post 1'"] + (verb == "update" ? ["--set", "content=x"] : []))
            #expect(both.status != 0, "\(verb)")
            #expect(both.stderr.contains("--all and --where exclude each other"), "\(verb): \(both.stderr)")
        }
        #expect(try count(store) == "3\n")
        let all = try CLI.run(["update", store, "--entity", "Post", "--all", "--set", "content=x"])
        #expect(all.stdout == "updated 3 Post rows\n", "\(all.stderr)")
        let one = try CLI.run(["update", store, "--entity", "Post", "--where", "title == 'Post 1'", "--set", "content=y"])
        #expect(one.stdout == "updated 1 Post row\n")
    }

    @Test func dryRunsCountAndWriteNothing() throws {
        let store = try makeStore()
        try CLI.run(["import", store, "--entity", "Post", "-"], stdin: posts(0..<5))
        let before = try token(store)
        let update = try CLI.run(["update", store, "--entity", "Post", "--where", "createdAt < '1970-01-01T00:00:02Z'", "--set", "content=x", "--dry-run"])
        #expect(update.status == 0, "\(update.stderr)")
        #expect(update.stdout == "would update 2 Post rows (dry run; nothing written)\n")
        let delete = try CLI.run(["delete", store, "--entity", "Post", "--all", "--dry-run"])
        #expect(delete.stdout == "would delete 5 Post rows (dry run; nothing written)\n")
        #expect(try count(store) == "5\n")
        #expect(try count(store, "content == 'x'") == "0\n")
        #expect(try token(store) == before)
    }

    @Test func importDryRunCountsAndWritesNothing() throws {
        let store = try makeStore()
        try CLI.run(["import", store, "--entity", "Post", "-"], stdin: posts(0..<2))
        let before = try token(store)
        let dry = try CLI.run(["import", store, "--entity", "Post", "--dry-run", "-"], stdin: posts(1..<4))
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout == "would import 3 Post rows (2 inserted, 1 updated) (dry run; nothing written)\n", "\(dry.stdout)")
        #expect(try count(store) == "2\n")
        #expect(try token(store) == before)
        let bad = try CLI.run(["import", store, "--entity", "Post", "--dry-run", "-"], stdin: posts(5..<6) + "{nope\n")
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("<stdin>:2"), "\(bad.stderr)")
    }

    @Test func setNullStoresNullAndSetNullTextStoresText() throws {
        let store = try makeStore()
        try CLI.run(["import", store, "--entity", "Post", "-"], stdin: posts(0..<2))
        let null = try CLI.run(["update", store, "--entity", "Post", "--where", "title == 'Post 0'", "--set-null", "content"])
        #expect(null.status == 0, "\(null.stderr)")
        let text = try CLI.run(["update", store, "--entity", "Post", "--where", "title == 'Post 1'", "--set", "content=null"])
        #expect(text.status == 0)
        #expect(try count(store, "content == nil") == "1\n")
        #expect(try count(store, "content == 'null'") == "1\n")
        let unknown = try CLI.run(["update", store, "--entity", "Post", "--all", "--set-null", "body"])
        #expect(unknown.status != 0)
        #expect(unknown.stderr.contains("Post has no attribute 'body'"), "\(unknown.stderr)")
        #expect(try CLI.run(["update", "--help"]).stdout.contains("--set-null"))
    }

    @Test func consumersStartAndMoveWhereTheyAreTold() throws {
        let store = try makeStore()
        try CLI.run(["import", store, "--entity", "Post", "--batch-size", "1", "-"], stdin: posts(0..<4))
        let current = try token(store)
        let tokens = try CLI.run(["history", store, "--json"]).stdoutLines.map { try json($0)["token"] as? String ?? "" }
        #expect(tokens.count == 4)
        #expect(try CLI.run(["consumers", "--help"]).stdout.contains("default current"))

        let byDefault = try CLI.run(["consumers", store, "add", "now"])
        #expect(byDefault.stdout == "consumer now at \(current) (0 transactions to read)\n", "\(byDefault.stderr)")
        let oldest = try CLI.run(["consumers", store, "add", "all", "--at", "oldest"])
        #expect(oldest.stdout.contains("(4 transactions to read)"), "\(oldest.stdout)\(oldest.stderr)")
        let atToken = try CLI.run(["consumers", store, "add", "mid", "--at", tokens[1]])
        #expect(atToken.stdout == "consumer mid at \(tokens[1]) (2 transactions to read)\n", "\(atToken.stderr)")
        let future = "99-" + (tokens[3].split(separator: "-").last.map(String.init) ?? "")
        let beyond = try CLI.run(["consumers", store, "add", "late", "--at", future])
        #expect(beyond.status != 0)
        #expect(beyond.stderr.contains("beyond the store's current token"), "\(beyond.stderr)")
        let again = try CLI.run(["consumers", store, "add", "mid", "--at", "oldest"])
        #expect(again.status != 0)
        #expect(again.stderr.contains("consumer mid exists"), "\(again.stderr)")

        let back = try CLI.run(["consumers", store, "move", "now", "--to", tokens[0]])
        #expect(back.stdout == "consumer now moved from \(current) to \(tokens[0]) (3 transactions to read)\n", "\(back.stderr)")
        let past = try CLI.run(["consumers", store, "move", "now", "--to", future])
        #expect(past.status != 0)
        #expect(past.stderr.contains("beyond the store's current token"))
        let byDate = try CLI.run(["consumers", store, "move", "now", "--to", "2100-01-01T00:00:00Z"])
        #expect(byDate.stdout.hasSuffix("to \(current) (0 transactions to read)\n"), "\(byDate.stdout)\(byDate.stderr)")
        let early = try CLI.run(["consumers", store, "move", "now", "--to", "2000-01-01T00:00:00Z"])
        #expect(early.stdout.contains("(4 transactions to read)"), "\(early.stdout)\(early.stderr)")

        // Pruned history cannot be gone back to.
        try CLI.run(["consumers", store, "remove", "all"])
        try CLI.run(["consumers", store, "remove", "mid"])
        try CLI.run(["consumers", store, "move", "now", "--to", tokens[1]])
        let pruned = try CLI.run(["prune", store, "--consumed"])
        #expect(pruned.status == 0, "\(pruned.stderr)")
        let before = try CLI.run(["consumers", store, "move", "now", "--to", tokens[0]])
        #expect(before.status != 0)
        #expect(before.stderr.contains("was pruned"), "\(before.stderr)")
    }

    @Test func pruneNamesTheConsumerHoldingHistoryBack() throws {
        let store = try makeStore()
        try CLI.run(["import", store, "--entity", "Post", "--batch-size", "1", "-"], stdin: posts(0..<3))
        try CLI.run(["consumers", store, "add", "slow", "--at", "oldest"])
        try CLI.run(["consumers", store, "add", "fast"])
        let prune = try CLI.run(["prune", store, "--consumed"])
        #expect(prune.status == 0, "\(prune.stderr)")
        #expect(prune.stdout.contains("is kept for consumer slow"), "\(prune.stdout)")
        #expect(prune.stdout.contains("3 transactions behind"), "\(prune.stdout)")
        #expect(!prune.stdout.contains("fast"))

        let maxAge = try CLI.run(["prune", store, "--max-age", "30d"])
        #expect(maxAge.status != 0)
        #expect(maxAge.stderr.contains("--max-age without --consumed"), "\(maxAge.stderr)")
    }

    @Test func migrationAddsAttributesInAnyPlaceAndSaysWhat() throws {
        let v1 = scratch.write("v1.yml", """
            entities:
              Post:
                attributes:
                  title: { type: string, optional: false }
                  content: string
            """)
        let v2 = scratch.write("v2.yml", """
            entities:
              Post:
                attributes:
                  title: { type: string, optional: false }
                  views: { type: integer, default: 0 }
                  content: string
              Comment:
                attributes:
                  text: string
            """)
        let store = scratch.path("m.sqlite")
        #expect(try CLI.run(["init", store, "--model", v1, "--history"]).status == 0)
        try CLI.run(["import", store, "--entity", "Post", "-"], stdin: #"{"title": "a", "content": "b"}"# + "\n")
        let migrated = try CLI.run(["init", store, "--model", v2])
        #expect(migrated.status == 0, "\(migrated.stderr)")
        #expect(migrated.stdoutLines.contains("migrated: added Post.views"), "\(migrated.stdout)")
        #expect(migrated.stdoutLines.contains("migrated: added entity Comment"), "\(migrated.stdout)")
        // Opening again with the same model migrates nothing.
        let again = try CLI.run(["init", store, "--model", v2])
        #expect(again.status == 0)
        #expect(!again.stdout.contains("migrated"))
        // Old rows, new writes and their history all read back by name.
        try CLI.run(["update", store, "--entity", "Post", "--all", "--set", "views=7"])
        let row = try json(try #require(CLI.run(["query", store, "--entity", "Post", "--json"]).stdoutLines.first))
        #expect(row["title"] as? String == "a")
        #expect(row["content"] as? String == "b")
        #expect(row["views"] as? Int == 7)
        let history = try CLI.run(["history", store, "--type", "update"])
        #expect(history.stdout.contains("views: 0  →  7"), "\(history.stdout)")
    }

    @Test func negativeNumbersWrittenWithEqualsAreRefused() throws {
        let store = try makeStore()
        for arguments in [["query", store, "--entity", "Post", "--limit=-1"], ["history", store, "--limit=-1"],
                          ["tail", store, "--max-changes=-2"], ["search", store, "x", "--limit=-1"]] {
            let result = try CLI.run(arguments)
            #expect(result.status != 0, "\(arguments)")
            #expect(result.stderr.contains("must be"), "\(arguments): \(result.stderr)")
        }
    }

    @Test func namesWithControlCharactersAreEscaped() throws {
        let store = try makeStore()
        // The library refuses such a consumer name; a store written before it did may hold one.
        let refused = try CLI.run(["consumers", store, "add", "evil\u{1B}[2Jname"])
        #expect(refused.status != 0 && refused.stderrLines.count == 1 && !refused.stderr.contains("\u{1B}"), "\(refused.stderr)")
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        shell.arguments = [store, "INSERT INTO _tributary_consumer (name, token, committedAt, createdAt) VALUES ('evil' || char(27) || '[2Jname', 0, 0, 0)"]
        try shell.run()
        shell.waitUntilExit()
        try CLI.run(["import", store, "--entity", "Post", "--author", "bad\u{1B}[31mauthor\ttab", "-"], stdin: posts(0..<1))
        for output in [try CLI.run(["consumers", store, "list"]).stdout, try CLI.run(["status", store]).stdout,
                       try CLI.run(["history", store]).stdout, try CLI.run(["history", store, "--oneline"]).stdout,
                       try CLI.run(["tail", store]).stdout] {
            #expect(!output.contains("\u{1B}"), "\(output)")
            #expect(!output.contains("\t"), "\(output)")
        }
        #expect(try CLI.run(["consumers", store, "list"]).stdout.contains(#"evil\e[2Jname"#))
        #expect(try CLI.run(["history", store, "--oneline"]).stdout.contains(#"bad\e[31mauthor\ttab"#))
    }

    /// Before the fix, a right-to-left override (U+202E) in an author or a value reached the
    /// terminal as it was, and reordered what the rest of the line showed.
    @Test func bidirectionalControlsAreEscaped() throws {
        let store = try makeStore()
        let post = #"{"title": "invoice\#u{202E}fdp.exe", "externalID": "x1", "createdAt": 0, "content": "c"}"# + "\n"
        try CLI.run(["import", store, "--entity", "Post", "--author", "ali\u{2067}ce", "-"], stdin: post)
        for output in [try CLI.run(["history", store]).stdout, try CLI.run(["history", store, "--oneline"]).stdout,
                       try CLI.run(["query", store, "--entity", "Post"]).stdout] {
            #expect(!output.unicodeScalars.contains { $0.value == 0x202E || $0.value == 0x2067 }, "\(output)")
        }
        #expect(try CLI.run(["history", store]).stdout.contains(#"invoice\u{202e}fdp.exe"#))
        #expect(try CLI.run(["history", store, "--oneline"]).stdout.contains(#"ali\u{2067}ce"#))
    }

    /// Before the fix, a path whose bytes are not UTF-8 was read with U+FFFD in their place:
    /// `adopt` said the file was missing, `init` made a file of another name.
    @Test func argumentsThatAreNotUTF8AreRefusedInOneLine() throws {
        let dir = Scratch()
        let script = #"cd "$1" && printf 'CREATE TABLE t (id INTEGER PRIMARY KEY);' | sqlite3 "$(printf '\377.db')" && exec "$0" adopt "$(printf '\377.db')""#
        let result = try TributaryProcess.run(["-c", script, CLI.binary.path, dir.url.path], executable: URL(fileURLWithPath: "/bin/sh"))
        #expect(result.status != 0)
        #expect(result.stderrLines == ["Error: argument 2 is not valid UTF-8; give paths and names in UTF-8 (rename the file if its name is not)"], "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).count == 1, "nothing made beside the file")
    }

    @Test func lagMeansTheSameInStatusAndConsumersList() throws {
        let store = try makeStore()
        try CLI.run(["consumers", store, "add", "reader"])
        try CLI.run(["import", store, "--entity", "Post", "-"], stdin: posts(0..<1))
        Thread.sleep(forTimeInterval: 1.2)
        let list = try CLI.run(["consumers", store, "list"]).stdoutLines
        let status = try CLI.run(["status", store]).stdoutLines
        #expect(list.first == status.dropFirst().first, "\(list) vs \(status)")
        #expect(list.first?.contains("lag (transactions)") == true)
        let entry = try json(try #require(CLI.run(["consumers", store, "list", "--json"]).stdoutLines.first))
        // One unread transaction that has waited a second: the lag in seconds says so.
        #expect(entry["lagTransactions"] as? Int == 1)
        #expect((entry["lagSeconds"] as? Double ?? 0) >= 1.0, "\(entry)")
    }
}
