import Foundation
import Testing

/// The `tributary` binary end to end: real files, real processes.
@Suite struct CLITests {
    let scratch = Scratch()

    func makeStore() throws -> String {
        let store = scratch.path("blog.sqlite")
        let result = try CLI.run(["init", store, "--model", CLI.blogModel])
        #expect(result.status == 0, "\(result.stderr)")
        return store
    }

    func posts(_ range: Range<Int>) -> String {
        range.map { #"{"externalID": "ext-\#($0)", "title": "Post \#($0)", "createdAt": "2024-05-01T12:00:\#(String(format: "%02d", $0 % 60))Z", "content": "body \#($0)"}"# }.joined(separator: "\n") + "\n"
    }

    /// A failure is one line on standard error, a non-zero exit, no trace.
    func expectOneLineError(_ result: CLIResult, contains: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status != 0, sourceLocation: sourceLocation)
        #expect(result.stderrLines.count == 1, "stderr was: \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains(contains), "stderr was: \(result.stderr)", sourceLocation: sourceLocation)
        #expect(!result.stderr.contains("Fatal error"), sourceLocation: sourceLocation)
    }

    @Test func initImportQueryCount() throws {
        let store = try makeStore()
        let file = scratch.write("posts.ndjson", posts(0..<25))
        let imported = try CLI.run(["import", store, "--entity", "Post", "--batch-size", "10", file])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("imported 25 Post rows (25 inserted, 0 updated)"))
        #expect(imported.stderr.isEmpty)  // no progress when piped

        let count = try CLI.run(["count", store, "--entity", "Post", "--where", "title BEGINSWITH 'Post 1'"])
        #expect(count.stdout == "11\n")

        let query = try CLI.run(["query", store, "--entity", "Post", "--where", #"externalID IN {"ext-3", 'ext-4'}"#, "--sort", "title:desc", "--json"])
        #expect(query.status == 0, "\(query.stderr)")
        let lines = query.stdoutLines
        #expect(lines.count == 2)
        let first = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any]
        #expect(first?["title"] as? String == "Post 4")
        #expect(first?["createdAt"] as? String == "2024-05-01T12:00:04Z")
        #expect(lines[0].hasPrefix(#"{"objectID":"tributary://"#))
        #expect(lines[0].contains(#"/Post/p5","title":"Post 4","content":"body 4","externalID":"ext-4","createdAt""#))
        #expect(lines[0].hasSuffix(#""tags":[],"attachments":[]}"#))

        let table = try CLI.run(["query", store, "--entity", "Post", "--limit", "2"])
        #expect(table.stdoutLines.first?.contains("title") == true)
        #expect(table.stdoutLines.last == "(2 Post rows)")
    }

    @Test func reimportUpdatesInsteadOfDuplicating() throws {
        let store = try makeStore()
        try CLI.run(["import", store, "--entity", "Post", "-"], stdin: posts(0..<5))
        let again = try CLI.run(["import", store, "--entity", "Post", "-"], stdin: posts(3..<8))
        #expect(again.stdout.contains("(3 inserted, 2 updated)"))
        #expect(try CLI.run(["count", store, "--entity", "Post"]).stdout == "8\n")
    }

    @Test func updateAndDelete() throws {
        let store = try makeStore()
        try CLI.run(["import", store, "--entity", "Post", "-"], stdin: posts(0..<10))
        let update = try CLI.run(["update", store, "--entity", "Post", "--where", "title ENDSWITH '1'", "--set", "content=updated", "--set", "createdAt=2030-01-01T00:00:00Z"])
        #expect(update.status == 0, "\(update.stderr)")
        #expect(update.stdout == "updated 1 Post row\n")
        #expect(try CLI.run(["count", store, "--entity", "Post", "--where", "createdAt > '2029-01-01T00:00:00Z'"]).stdout == "1\n")
        let delete = try CLI.run(["delete", store, "--entity", "Post", "--where", "content == 'updated'"])
        #expect(delete.stdout == "deleted 1 Post row\n")
        #expect(try CLI.run(["count", store, "--entity", "Post"]).stdout == "9\n")
    }

    @Test func modelPrintsTheCachedModel() throws {
        let store = try makeStore()
        let model = try CLI.run(["model", store])
        #expect(model.status == 0)
        #expect(model.stdout.contains("externalID: { type: string, optional: false }"))
        // What it prints is itself a model file that creates the same store.
        let file = scratch.write("printed.yml", model.stdout)
        #expect(try CLI.run(["init", scratch.path("copy.sqlite"), "--model", file]).status == 0)
    }

    // MARK: Bad input

    @Test func aBadLineRejectsTheWholeImport() throws {
        let store = try makeStore()
        var text = posts(0..<30)
        text += #"{"externalID": "bad", "title": "Bad", "createdAt": "someday"}"# + "\n"
        let result = try CLI.run(["import", store, "--entity", "Post", "--batch-size", "10", "-"], stdin: text)
        expectOneLineError(result, contains: "<stdin>:31")
        #expect(result.stderr.contains("'createdAt' of Post is a date"))
        #expect(try CLI.run(["count", store, "--entity", "Post"]).stdout == "0\n")
    }

    @Test func malformedNDJSONNamesTheLine() throws {
        let store = try makeStore()
        let file = scratch.write("bad.ndjson", posts(0..<2) + "{\"title\": \n")
        expectOneLineError(try CLI.run(["import", store, "--entity", "Post", file]), contains: "bad.ndjson:3: malformed JSON")
    }

    @Test func missingRequiredValueNamesTheLine() throws {
        let store = try makeStore()
        let result = try CLI.run(["import", store, "--entity", "Post", "-"], stdin: posts(0..<3) + #"{"externalID": "x", "createdAt": 0}"# + "\n")
        expectOneLineError(result, contains: "<stdin>:4")
        #expect(result.stderr.contains("'title' of Post is required"))
    }

    @Test func unknownEntityAndAttribute() throws {
        let store = try makeStore()
        expectOneLineError(try CLI.run(["count", store, "--entity", "Pots"]), contains: "unknown entity 'Pots'")
        expectOneLineError(try CLI.run(["import", store, "--entity", "Post", "-"], stdin: #"{"titel": "x"}"# + "\n"), contains: "has no attribute or relationship 'titel'")
        expectOneLineError(try CLI.run(["update", store, "--entity", "Post", "--all", "--set", "titel=x"]), contains: "Post has no attribute 'titel'")
    }

    @Test func wrongTypeOnSet() throws {
        let store = try makeStore()
        expectOneLineError(try CLI.run(["update", store, "--entity", "Post", "--all", "--set", "createdAt=tomorrow"]), contains: "is not a valid date")
    }

    @Test func updateGivingTwoRowsTheSameUniqueValue() throws {
        let store = try makeStore()
        try CLI.run(["import", store, "--entity", "Post", "-"], stdin: posts(0..<3))
        let result = try CLI.run(["update", store, "--entity", "Post", "--all", "--set", "externalID=same"])
        expectOneLineError(result, contains: "two Post rows would have the same externalID")
        #expect(try CLI.run(["count", store, "--entity", "Post", "--where", "externalID == 'same'"]).stdout == "0\n")
    }

    @Test func predicateErrors() throws {
        let store = try makeStore()
        expectOneLineError(try CLI.run(["count", store, "--entity", "Post", "--where", "title == "]), contains: "predicate")
        expectOneLineError(try CLI.run(["count", store, "--entity", "Post", "--where", "title = 'unterminated"]), contains: "predicate")
        expectOneLineError(try CLI.run(["count", store, "--entity", "Post", "--where", "titel == 'x'"]), contains: "unknown key 'titel'")
    }

    @Test func missingFileNotAStoreAndBadModel() throws {
        expectOneLineError(try CLI.run(["count", scratch.path("nope.sqlite"), "--entity", "Post"]), contains: "no store at this path")
        let junk = scratch.write("junk.sqlite", String(repeating: "junk", count: 500))
        expectOneLineError(try CLI.run(["count", junk, "--entity", "Post"]), contains: "not a SQLite database")
        let store = try makeStore()
        expectOneLineError(try CLI.run(["import", store, "--entity", "Post", scratch.path("missing.ndjson")]), contains: "cannot read the input file")
        let badModel = scratch.write("bad.yml", "entities:\n  A:\n    attributs: {}\n")
        expectOneLineError(try CLI.run(["init", scratch.path("new.sqlite"), "--model", badModel]), contains: "bad.yml:3: unknown key 'attributs'")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("new.sqlite")))
        expectOneLineError(try CLI.run(["init", scratch.path("x.sqlite"), "--model", scratch.path("none.yml")]), contains: "cannot read model file")
    }

    @Test func aLockedStoreTimesOut() throws {
        let store = try makeStore()
        // A plain sqlite3 process holds the write lock for a while.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        holder.arguments = [store]
        let input = Pipe()
        holder.standardInput = input
        holder.standardOutput = Pipe()
        try holder.run()
        input.fileHandleForWriting.write(Data("BEGIN IMMEDIATE;\nINSERT INTO \"Tag\"(\"name\") VALUES('held');\nSELECT 'locked';\n".utf8))
        Thread.sleep(forTimeInterval: 0.5)
        let result = try CLI.run(["import", store, "--entity", "Tag", "--busy-timeout", "0.3", "-"], stdin: #"{"name": "x"}"# + "\n")
        input.fileHandleForWriting.write(Data("ROLLBACK;\n.quit\n".utf8))
        try input.fileHandleForWriting.close()
        holder.waitUntilExit()
        expectOneLineError(result, contains: "locked")
    }

    @Test func newerFormatIsRefused() throws {
        let store = try makeStore()
        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        sqlite.arguments = [store, "UPDATE _tributary_metadata SET value = '7' WHERE key = 'format'"]
        try sqlite.run()
        sqlite.waitUntilExit()
        expectOneLineError(try CLI.run(["count", store, "--entity", "Post"]), contains: "newer")
    }
}
