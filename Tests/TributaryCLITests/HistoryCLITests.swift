import Foundation
import Testing

/// History from the command line: capture on every CLI write path, the NDJSON record,
/// tokens, consumers and pruning, and a writer killed mid-import.
@Suite struct HistoryCLITests {
    let scratch = Scratch()

    func makeStore() throws -> String { try CLI.makeBlogStore(at: scratch.path("h.sqlite")) }

    func posts(_ range: Range<Int>) -> String { CLI.posts(range) }

    func json(_ line: String) throws -> [String: Any] { try CLI.json(line) }

    @Test func everyCLIWriteIsRecordedWithItsAuthorAndValues() throws {
        let store = try makeStore()
        try CLI.run(["import", store, "--entity", "Post", "--author", "importer", "--batch-size", "2", "-"], stdin: posts(0..<3))
        try CLI.run(["update", store, "--entity", "Post", "--where", "externalID == 'ext-1'", "--set", "title=Renamed", "--author", "editor"])
        try CLI.run(["delete", store, "--entity", "Post", "--where", "externalID == 'ext-2'", "--author", "janitor"])
        let history = try CLI.run(["history", store, "--json"])
        #expect(history.status == 0, "\(history.stderr)")
        let lines = history.stdoutLines
        #expect(lines.count == 4)  // two import batches, the update, the delete
        let first = try json(lines[0])
        #expect(first["author"] as? String == "importer")
        let changes = try #require(first["changes"] as? [[String: Any]])
        #expect(changes.count == 2)
        #expect(changes[0]["type"] as? String == "insert")
        #expect((changes[0]["after"] as? [String: Any])?["title"] as? String == "Post 0")
        #expect((changes[0]["objectID"] as? String)?.hasSuffix("/Post/p1") == true)
        let update = try json(lines[2])
        #expect(update["author"] as? String == "editor")
        let updated = try #require((update["changes"] as? [[String: Any]])?.first?["updatedProperties"] as? [String: [String: Any]])
        #expect(updated["title"]?["before"] as? String == "Post 1")
        #expect(updated["title"]?["after"] as? String == "Renamed")
        let delete = try json(lines[3])
        let tombstone = try #require((delete["changes"] as? [[String: Any]])?.first?["before"] as? [String: Any])
        #expect(tombstone["externalID"] as? String == "ext-2")

        #expect(try CLI.run(["history", store, "--count", "--author", "importer"]).stdout == "2\n")
        #expect(try CLI.run(["history", store, "--count", "--exclude-author", "importer", "--type", "delete"]).stdout == "1\n")
        let token = try CLI.run(["token", store]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token == (lines.last.flatMap { try? json($0)["token"] as? String }))
        #expect(try CLI.run(["history", store, "--after", token]).stdout == "(0 transactions)\n")
        let table = try CLI.run(["history", store, "--type", "update"])
        #expect(table.stdout.contains(#"title: "Post 1"  →  "Renamed""#))
    }

    @Test func consumersAndPruning() throws {
        let store = try makeStore()
        try CLI.run(["import", store, "--entity", "Post", "--batch-size", "1", "-"], stdin: posts(0..<4))
        let tokens = try CLI.run(["history", store, "--json"]).stdoutLines.map { try json($0)["token"] as! String }
        #expect(tokens.count == 4)
        #expect(try CLI.run(["consumers", store, "add", "search"]).status == 0)
        #expect(try CLI.run(["consumers", store, "commit", "search", tokens[1]]).status == 0)
        let listed = try CLI.run(["consumers", store, "list", "--json"])
        let consumer = try json(listed.stdoutLines[0])
        #expect(consumer["name"] as? String == "search")
        #expect(consumer["lagTransactions"] as? Int == 2)
        #expect(consumer["state"] as? String == "current")
        let dry = try CLI.run(["prune", store, "--consumed", "--dry-run"])
        #expect(dry.stdout.contains("would delete 2 transactions"))
        #expect(try CLI.run(["history", store, "--count"]).stdout == "4\n")
        let pruned = try CLI.run(["prune", store, "--consumed"])
        #expect(pruned.stdout.contains("deleted 2 transactions"))
        #expect(try CLI.run(["prune", store, "--consumed"]).stdout.hasPrefix("nothing to prune"))
        // A retention bound prunes past the consumer, which then expires.
        let forced = try CLI.run(["prune", store, "--before", tokens[2]])
        #expect(forced.stdout.contains("deleted 1 transactions"))
        let expired = try json(try CLI.run(["consumers", store, "list", "--json"]).stdoutLines[0])
        #expect(expired["state"] as? String == "expired")
        let error = try CLI.run(["history", store, "--after", tokens[1]])
        #expect(error.status != 0)
        #expect(error.stderrLines.count == 1)
        #expect(error.stderr.contains("oldest token still kept is \(tokens[2])"))
        #expect(try CLI.run(["consumers", store, "remove", "search"]).status == 0)
    }

    @Test func badHistoryInput() throws {
        let store = try makeStore()
        let other = scratch.path("other.sqlite")
        try CLI.run(["init", other, "--model", CLI.blogModel, "--history"])
        let foreign = try CLI.run(["token", other]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        for (arguments, message) in [
            (["history", store, "--after", foreign], "belongs to another store"),
            (["history", store, "--after", "yesterday"], "is not a history token"),
            (["history", store, "--since", "last week"], "is not a date"),
            (["history", store, "--type", "upsert"], "unknown change type"),
            (["consumers", store, "commit", "ghost", foreign.replacingOccurrences(of: foreign.split(separator: "-")[1], with: "00000000")], "belongs to another store"),
            (["consumers", store, "remove", "ghost"], "no consumer named 'ghost'"),
            (["prune", store, "--consumed", "--max-age", "soon"], "is not a duration"),
        ] {
            let result = try CLI.run(arguments)
            #expect(result.status != 0, "\(arguments)")
            #expect(result.stderrLines.count == 1, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
        // An entity the model lacks could never match: it is named, with the model's entities.
        let unknown = try CLI.run(["history", store, "--entity", "Nope", "--count"])
        #expect(unknown.status != 0)
        #expect(unknown.stderr.contains("--entity: unknown entity 'Nope'; the model has Post, Tag, Attachment, ImageData"), "\(unknown.stderr)")
        #expect(try CLI.run(["history", store, "--author", "nobody"]).status == 0)
        let untracked = scratch.path("plain.sqlite")
        try CLI.run(["init", untracked, "--model", CLI.blogModel])
        let result = try CLI.run(["history", untracked])
        #expect(result.status != 0)
        #expect(result.stderr.contains("does not track history"))
    }

    /// An import killed at random points leaves data and history in step: every
    /// committed batch has both, the one in flight has neither.
    @Test func aKilledWriterLeavesNeitherDataNorHistoryOfItsOpenTransaction() throws {
        let store = try makeStore()
        let file = scratch.write("big.ndjson", posts(0..<60_000))
        for attempt in 0..<4 {
            let process = Process()
            process.executableURL = CLI.binary
            process.arguments = ["import", store, "--entity", "Post", "--batch-size", "500", "--author", "run\(attempt)", file]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            Thread.sleep(forTimeInterval: 0.3 + Double(attempt) * 0.25)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let rows = Int(try CLI.run(["count", store, "--entity", "Post"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
            var inserted = 0
            for line in try CLI.run(["history", store, "--json", "--type", "insert"]).stdoutLines {
                inserted += (try json(line)["changes"] as? [Any])?.count ?? 0
            }
            #expect(rows == inserted, "attempt \(attempt): \(rows) rows but \(inserted) recorded inserts")
            #expect(rows % 500 == 0 || rows == 60_000)
        }
    }
}
