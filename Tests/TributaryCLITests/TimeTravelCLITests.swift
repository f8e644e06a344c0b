import Foundation
import Testing

/// `query --as-of`, `show`, `restore` and `history --object` through the binary (issue 24).
@Suite struct TimeTravelCLITests {
    let scratch = Scratch()

    /// Before the fix, `query --as-of` and `show --as-of` opened the store read-only, which does
    /// not fold other programs' writes: the past was rolled back from rows that held writes
    /// history did not have yet, so it showed them (`p1 changed`, `p3 c` as of before them).
    @Test func theRowsAsOfATokenLeaveOutWritesOfOtherProgramsNotReadYet() throws {
        let db = scratch.path("items.db")
        #expect(try CLI.sqlite3(db, "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT);").status == 0)
        #expect(try CLI.run(["adopt", db]).status == 0)
        #expect(try CLI.sqlite3(db, "INSERT INTO items VALUES (1, 'a'), (2, 'b');").status == 0)
        let point = try CLI.run(["token", db]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try CLI.sqlite3(db, "UPDATE items SET name = 'changed' WHERE id = 1; DELETE FROM items WHERE id = 2; INSERT INTO items VALUES (3, 'c');").status == 0)
        let past = try CLI.run(["query", db, "--entity", "items", "--as-of", point, "--json"])
        #expect(past.status == 0, "\(past.stderr)")
        #expect(try past.stdout.split(separator: "\n").map { try CLI.json(String($0))["name"] as? String } == ["a", "b"], "\(past.stdout)")
        let uri = try #require(try CLI.json(String(past.stdout.split(separator: "\n")[0]))["objectID"] as? String)
        #expect(try CLI.sqlite3(db, "UPDATE items SET name = 'again' WHERE id = 1;").status == 0)
        let shown = try CLI.run(["show", db, uri, "--as-of", point, "--json"])
        #expect(try CLI.json(shown.stdout.trimmingCharacters(in: .whitespacesAndNewlines))["name"] as? String == "a", "\(shown.stdout)\(shown.stderr)")
    }

    @Test func queryAsOfRestoreAndTheObjectsTimeline() throws {
        let db = try CLI.makeBlogStore(at: scratch.path("blog.sqlite"))
        #expect(try CLI.run(["import", db, "--entity", "Post"], stdin: CLI.posts(0..<3)).status == 0)
        let point = try CLI.run(["token", db]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try CLI.run(["update", db, "--entity", "Post", "--where", "externalID == 'ext-1'", "--set", "title=Vandalised", "--author", "mallory"]).status == 0)
        #expect(try CLI.run(["delete", db, "--entity", "Post", "--where", "externalID == 'ext-2'"]).status == 0)

        let past = try CLI.run(["query", db, "--entity", "Post", "--as-of", point, "--json"])
        #expect(past.status == 0, "\(past.stderr)")
        let titles = try past.stdout.split(separator: "\n").map { try CLI.json(String($0))["title"] as? String }
        #expect(titles == ["Post 0", "Post 1", "Post 2"], "\(past.stdout)")
        let uri = try #require(try CLI.json(String(past.stdout.split(separator: "\n")[1]))["objectID"] as? String)

        let timeline = try CLI.run(["history", db, "--object", uri])
        #expect(timeline.status == 0, "\(timeline.stderr)")
        #expect(timeline.stdout.contains("+ insert Post/p2") && timeline.stdout.contains(#"title: "Post 1"  →  "Vandalised""#), "\(timeline.stdout)")
        #expect(!timeline.stdout.contains("Post/p1") && !timeline.stdout.contains("Post/p3"), "only that object: \(timeline.stdout)")

        let shownNow = try CLI.run(["show", db, uri, "--json"])
        #expect(shownNow.status == 0, "\(shownNow.stderr)")
        #expect(try CLI.json(shownNow.stdout.trimmingCharacters(in: .whitespacesAndNewlines))["title"] as? String == "Vandalised", "\(shownNow.stdout)")
        let shownThen = try CLI.run(["show", db, uri, "--as-of", point, "--json"])
        #expect(try CLI.json(shownThen.stdout.trimmingCharacters(in: .whitespacesAndNewlines))["title"] as? String == "Post 1", "\(shownThen.stdout)\(shownThen.stderr)")
        let deleted = uri.replacingOccurrences(of: "/Post/p2", with: "/Post/p3")
        let gone = try CLI.run(["show", db, deleted])
        #expect(gone.status != 0 && gone.stderrLines.count == 1 && gone.stderr.contains("--object \(deleted)"), "\(gone.stderr)")
        #expect(try CLI.run(["show", db, deleted, "--as-of", point]).stdout.contains("Post 2"), "a deleted object as it was")

        let restored = try CLI.run(["restore", db, "--entity", "Post", "--to", point, "--reason", "revert mallory"])
        #expect(restored.status == 0 && restored.stdout.contains("1 Post row updated, 1 Post row inserted again"), "\(restored.stdout)\(restored.stderr)")
        let now = try CLI.run(["query", db, "--entity", "Post", "--json"])
        #expect(try now.stdout.split(separator: "\n").map { try CLI.json(String($0))["title"] as? String } == ["Post 0", "Post 1", "Post 2"])
        let after = try CLI.run(["history", db, "--object", uri])
        #expect(after.stdout.contains("author=restore") && after.stdout.contains("reason=revert mallory"), "\(after.stdout)")

        let bad = try CLI.run(["query", db, "--entity", "Post", "--as-of", "yesterday"])
        #expect(bad.status != 0 && bad.stderrLines.count == 1 && bad.stderr.contains("--as-of"), "\(bad.stderr)")
        let foreign = try CLI.run(["history", db, "--object", "tributary://00000000-0000-0000-0000-000000000001/Post/p1"])
        #expect(foreign.status != 0 && foreign.stderr.contains("another store"), "\(foreign.stderr)")
    }

    @Test func anObjectsTimelineIsFollowed() async throws {
        let db = try CLI.makeBlogStore(at: scratch.path("follow.sqlite"))
        #expect(try CLI.run(["import", db, "--entity", "Post"], stdin: CLI.posts(0..<3)).status == 0)
        let rows = try CLI.run(["query", db, "--entity", "Post", "--json"]).stdout.split(separator: "\n")
        let uri = try #require(try CLI.json(String(rows[1]))["objectID"] as? String)
        func update(_ id: String, _ title: String) throws {
            let result = try CLI.run(["update", db, "--entity", "Post", "--where", "externalID == '\(id)'", "--set", "title=\(title)", "--reason", title])
            #expect(result.status == 0, "\(result.stderr)")
        }
        try update("ext-1", "first")
        let follow = try FollowingProcess(["history", db, "--object", uri, "--follow", "--oneline"])
        #expect(await Wait.until { follow.lines.count == 2 }, "the import and the first update: \(follow.lines)")
        try update("ext-0", "elsewhere")
        try update("ext-1", "second")
        #expect(await Wait.until { follow.lines.count == 3 }, "\(follow.lines)")
        follow.signal(SIGTERM)
        #expect(follow.waitForExit() == 0)
        #expect(follow.lines.count == 3 && !follow.lines.joined().contains("elsewhere"), "only the object's transactions: \(follow.lines)")
        let refused = try CLI.run(["history", db, "--follow", "--reverse"])
        #expect(refused.status != 0 && refused.stderr.contains("--follow"), "\(refused.stderr)")
    }

    @Test func changedValuesAreColouredOnATerminalOnly() throws {
        let db = try CLI.makeBlogStore(at: scratch.path("colour.sqlite"))
        #expect(try CLI.run(["import", db, "--entity", "Post"], stdin: CLI.posts(0..<1)).status == 0)
        #expect(try CLI.run(["update", db, "--entity", "Post", "--all", "--set", "title=New"]).status == 0)
        let coloured = try CLI.runOnTerminal(["history", db], environment: ["TERM": "xterm", "PAGER": "cat"], unsetting: ["NO_COLOR"])
        #expect(coloured.contains("title: \u{1B}[31m\"Post 0\"\u{1B}[0m  →  \u{1B}[32m\"New\"\u{1B}[0m"), "\(coloured)")
        let plain = try CLI.runOnTerminal(["history", db], environment: ["TERM": "xterm", "PAGER": "cat", "NO_COLOR": "1"])
        #expect(plain.contains(#"title: "Post 0"  →  "New""#) && !plain.contains("\u{1B}[3"), "\(plain)")
        #expect(!(try CLI.run(["history", db]).stdout.contains("\u{1B}[")), "piped: no colour")
    }
}
