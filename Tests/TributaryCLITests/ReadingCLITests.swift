import Foundation
import Testing

/// Reading history and rows from the command line: limits, order, one-line form, summaries of
/// large transactions, names the model lacks, empty results, query output.
@Suite struct ReadingCLITests {
    let scratch = Scratch()

    func makeStore() throws -> String { try CLI.makeBlogStore(at: scratch.path("r.sqlite")) }

    func posts(_ range: Range<Int>) -> String { CLI.posts(range) }
    func json(_ line: String) throws -> [String: Any] { try CLI.json(line) }

    /// Five transactions: imports of 1, 2, 3, 4 and 5 posts by authors a0…a4.
    func storeWithHistory() throws -> String {
        let store = try makeStore()
        var next = 0
        for size in 1...5 {
            try CLI.run(["import", store, "--entity", "Post", "--author", "a\(size - 1)", "-"], stdin: posts(next..<next + size))
            next += size
        }
        return store
    }

    func tokens(_ result: CLIResult) -> [String] {
        result.stdoutLines.map { String($0.prefix { $0 != " " }) }
    }

    @Test func historyLimitReverseAndOneline() throws {
        let store = try storeWithHistory()
        let all = tokens(try CLI.run(["history", store, "--oneline"]))
        #expect(all.count == 5)
        let oneline = try CLI.run(["history", store, "--oneline"]).stdoutLines
        #expect(oneline[2].hasSuffix("  a2  import  3 inserts"), "\(oneline[2])")
        #expect(oneline[0].hasSuffix("  a0  import  1 insert"), "\(oneline[0])")
        #expect(tokens(try CLI.run(["history", store, "--oneline", "--limit", "2"])) == Array(all.prefix(2)))
        #expect(tokens(try CLI.run(["history", store, "--oneline", "--reverse"])) == all.reversed())
        #expect(tokens(try CLI.run(["history", store, "--oneline", "--reverse", "--limit", "2"])) == [all[4], all[3]])
        #expect(tokens(try CLI.run(["history", store, "--oneline", "--reverse", "--author", "a1", "--author", "a3"])) == [all[3], all[1]])
        #expect(try CLI.run(["history", store, "--json", "--reverse", "--limit", "1"]).stdoutLines.count == 1)
        #expect(try CLI.run(["history", store, "--limit", "0"]).stdout == "(0 transactions)\n")
        #expect(try CLI.run(["history", store, "--author", "nobody"]).stdout == "(0 transactions)\n")
        #expect(try CLI.run(["history", store, "--author", "nobody", "--json"]).stdout.isEmpty)
    }

    @Test func largeTransactionsAreSummarised() throws {
        let store = try makeStore()
        try CLI.run(["import", store, "--entity", "Post", "-"], stdin: posts(0..<1000))
        let history = try CLI.run(["history", store, "--max-changes", "5"]).stdoutLines
        #expect(history.count == 7, "\(history.prefix(8))")
        #expect(history.last == "  … and 995 more changes")
        let tail = try CLI.run(["tail", store, "-n", "1", "--max-changes", "2"]).stdoutLines
        #expect(tail.count == 4)
        #expect(tail.last == "  … and 998 more changes")
    }

    @Test func tailCountsTransactions() throws {
        let store = try storeWithHistory()
        let tail = try CLI.run(["tail", store, "-n", "2"])
        // Two transactions (4 and 5 inserts): two headers, nine change lines.
        #expect(tail.stdoutLines.filter { !$0.hasPrefix(" ") }.count == 2)
        #expect(tail.stdoutLines.count == 11)
        let none = try CLI.run(["tail", store, "--author", "nobody"])
        #expect(none.stdout == "(0 transactions)\n")
    }

    /// `export --to - --consumer C --through T` commits C through T, what it wrote, not
    /// through the store's newest token (it did, and the next export skipped 4 and 5).
    @Test func anExportToStandardOutputWithAnEndCommitsItsConsumerOnlyThroughTheEnd() throws {
        let store = try storeWithHistory()
        let tokens = try CLI.run(["history", store, "--json"]).stdoutLines.map { try json($0)["token"] as! String }
        #expect(tokens.count == 5)
        let first = try CLI.run(["export", store, "--to", "-", "--consumer", "pipe", "--through", tokens[2]])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdoutLines.count == 6)
        let listed = try json(try CLI.run(["consumers", store, "list", "--json"]).stdoutLines[0])
        #expect(listed["token"] as? String == tokens[2])
        let rest = try CLI.run(["export", store, "--to", "-", "--consumer", "pipe"])
        #expect(rest.stdoutLines.count == 9, "the records of transactions 4 and 5")
        // An end behind the consumer writes nothing and does not move it back.
        let behind = try CLI.run(["export", store, "--to", "-", "--consumer", "pipe", "--through", tokens[1]])
        #expect(behind.status == 0 && behind.stdout.isEmpty, "\(behind.stdout)\(behind.stderr)")
        #expect(try json(try CLI.run(["consumers", store, "list", "--json"]).stdoutLines[0])["token"] as? String == tokens[4])
    }

    @Test func unknownEntitiesAndPropertiesAreNamed() throws {
        let store = try storeWithHistory()
        for arguments in [["history", store, "--entity", "Pots"], ["tail", store, "--entity", "Pots"],
                          ["export", store, "--to", "-", "--entity", "Pots"], ["export", store, "--to", scratch.path("s"), "--entity", "Pots"]] {
            let result = try CLI.run(arguments)
            #expect(result.status != 0, "\(arguments)")
            #expect(result.stderrLines.count == 1, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("unknown entity 'Pots'; the model has Post, Tag, Attachment, ImageData"), "\(arguments): \(result.stderr)")
        }
        let exclude = try CLI.run(["export", store, "--to", "-", "--exclude", "Post.titel"])
        #expect(exclude.status != 0)
        #expect(exclude.stderr.contains("Post has no property 'titel'"), "\(exclude.stderr)")
        let bare = try CLI.run(["export", store, "--to", "-", "--exclude", "titel"])
        #expect(bare.stderr.contains("no entity has a property 'titel'"), "\(bare.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("s/manifest.json")))
        #expect(try CLI.run(["export", store, "--to", "-", "--exclude", "Post.content", "--exclude", "title"]).status == 0)
    }

    @Test func queryJSONCarriesObjectIDsAndToManyRelationships() throws {
        let store = try makeStore()
        try CLI.run(["import", store, "--entity", "Tag", "-"], stdin: #"{"name": "swift"}"# + "\n" + #"{"name": "linux"}"# + "\n")
        let tags = try CLI.run(["query", store, "--entity", "Tag", "--json"]).stdoutLines.compactMap {
            (try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["objectID"] as? String
        }
        #expect(tags.count == 2)
        let post = #"{"externalID": "p", "title": "T", "createdAt": 0, "tags": ["\#(tags[0])", "\#(tags[1])"]}"#
        #expect(try CLI.run(["import", store, "--entity", "Post", "-"], stdin: post + "\n").status == 0)
        let line = try #require(CLI.run(["query", store, "--entity", "Post", "--json"]).stdoutLines.first)
        let row = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let id = try #require(row["objectID"] as? String)
        #expect(id.hasSuffix("/Post/p1"))
        #expect(row["tags"] as? [String] == tags)
        #expect(row["attachments"] as? [String] == [])
        // The same ID history gives the object.
        let history = try CLI.run(["history", store, "--entity", "Post", "--json"]).stdout
        #expect(history.contains(#""objectID":"\#(id)""#))
    }

    @Test func emptyResultsPrintTheirHeader() throws {
        let store = try makeStore()
        let empty = try CLI.run(["query", store, "--entity", "Post"])
        #expect(empty.stdoutLines.first?.hasPrefix("id  title  content  externalID  createdAt  updatedAt") == true, "\(empty.stdout)")
        #expect(empty.stdoutLines.last == "(0 Post rows)")
        try CLI.run(["import", store, "--entity", "Post", "-"], stdin: posts(0..<1))
        #expect(try CLI.run(["query", store, "--entity", "Post"]).stdoutLines.last == "(1 Post row)")
    }

    @Test func tablesFitTheTerminalAndPageOnlyThere() throws {
        let store = try makeStore()
        let long = String(repeating: "long words ", count: 20)
        let rows = (0..<30).map { #"{"externalID": "ext-\#($0)", "title": "\#(long)", "content": "\#(long)", "createdAt": \#($0)}"# }
        try CLI.run(["import", store, "--entity", "Post", "-"], stdin: rows.joined(separator: "\n") + "\n")
        let paged = scratch.path("paged.txt")
        let wide = try CLI.runOnTerminal(["query", store, "--entity", "Post"], environment: ["COLUMNS": "70", "LINES": "100", "PAGER": "tee \(paged)"])
        let lines = wide.split(separator: "\n")
        #expect(lines.count == 33, "\(wide)")
        #expect(lines.allSatisfy { $0.count <= 70 }, "\(wide)")
        #expect(wide.contains("…"))
        #expect(!FileManager.default.fileExists(atPath: paged))  // it fit on the screen

        let narrow = try CLI.runOnTerminal(["query", store, "--entity", "Post", "--limit", "1"], environment: ["COLUMNS": "24", "LINES": "100"])
        #expect(narrow.contains("-[ RECORD 1 ]"), "\(narrow)")
        #expect(narrow.split(separator: "\n").allSatisfy { $0.count <= 24 }, "\(narrow)")

        _ = try CLI.runOnTerminal(["query", store, "--entity", "Post"], environment: ["COLUMNS": "70", "LINES": "10", "PAGER": "tee \(paged)"])
        let pagedText = try String(contentsOfFile: paged, encoding: .utf8)
        #expect(pagedText.hasSuffix("(30 Post rows)\n"), "\(pagedText)")
        try FileManager.default.removeItem(atPath: paged)
        // Piped: neither narrowed nor paged.
        let piped = try CLI.run(["query", store, "--entity", "Post"], environment: ["COLUMNS": "70", "LINES": "10", "PAGER": "tee \(paged)"])
        #expect(piped.stdoutLines.contains { $0.count > 70 })
        #expect(!FileManager.default.fileExists(atPath: paged))
        // Piped, a value longer than a column's forty characters is printed whole.
        #expect(piped.stdout.contains(long.trimmingCharacters(in: .whitespaces)) && !piped.stdout.contains("…"), "\(piped.stdout)")
    }

    /// Before the fix, cells were padded with `padding(toLength:)`, which counts UTF-16
    /// units: `😀😀😀abc` (6 characters, 9 units) came out as `😀😀😀`.
    @Test func aValueHoldingEmojiIsPrintedWhole() throws {
        let store = try makeStore()
        try CLI.run(["import", store, "--entity", "Post", "-"], stdin: #"{"externalID": "e1", "title": "😀😀😀abc", "createdAt": 1}"# + "\n")
        let piped = try CLI.run(["query", store, "--entity", "Post"])
        #expect(piped.stdout.contains("😀😀😀abc"), "\(piped.stdout)")
        let terminal = try CLI.runOnTerminal(["query", store, "--entity", "Post"], environment: ["COLUMNS": "200", "LINES": "100"])
        #expect(terminal.contains("😀😀😀abc"), "\(terminal)")
    }

    /// Cells are padded by the columns a terminal gives them, where they were padded by
    /// characters: a column holding Chinese or emoji (two columns each) ran into the next.
    @Test func wideCharactersAndEmojiKeepTheColumnsAligned() throws {
        let store = try makeStore()
        let rows = [("e1", "日本語の題"), ("e2", "😀😀 ok"), ("e3", "plain")].map { #"{"externalID": "\#($0.0)", "title": "\#($0.1)", "content": "CONTENT", "createdAt": 1}"# }
        try CLI.run(["import", store, "--entity", "Post", "-"], stdin: rows.joined(separator: "\n") + "\n")
        let lines = try CLI.run(["query", store, "--entity", "Post"]).stdoutLines
        for start in ["p1  日本語の題  CONTENT", "p2  😀😀 ok     CONTENT", "p3  plain       CONTENT"] {
            #expect(lines.contains { $0.hasPrefix(start) }, "\(start): \(lines)")
        }
        #expect(lines.first?.hasPrefix("id  title       content") == true, "\(lines)")
    }
}
