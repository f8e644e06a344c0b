import Foundation
import Testing

/// Inputs that once crashed the binary (issue 18): each is refused with one line, or read
/// without a trap when another program stored it.
extension CLITests {
    func makeHistoryStore(_ name: String = "history.sqlite") throws -> String {
        let store = scratch.path(name)
        let result = try CLI.run(["init", store, "--model", CLI.blogModel, "--history"])
        #expect(result.status == 0, "\(result.stderr)")
        return store
    }

    /// Runs the system's sqlite3 shell on `store` (another program writing the file).
    func sqlite3(_ store: String, _ sql: String) throws {
        let result = try CLI.sqlite3(store, sql)
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test func emptyValuesLeaveARowUpdatable() throws {
        let store = try makeHistoryStore()
        try CLI.run(["import", store, "--entity", "Post", "-"], stdin: posts(0..<2))
        for title in ["", "", "again", ""] {
            let result = try CLI.run(["update", store, "--entity", "Post", "--where", "externalID == 'ext-0'", "--set", "title=\(title)", "--set", "content="])
            #expect(result.status == 0, "\(result.stderr)")
        }
        let rename = try CLI.run(["update", store, "--entity", "Post", "--where", "externalID == 'ext-0'", "--set", "externalID=e0"])
        #expect(rename.status == 0, "\(rename.stderr)")
        #expect(try CLI.run(["count", store, "--entity", "Post", "--where", "externalID == 'e0' AND title == ''"]).stdout == "1\n")
        let history = try CLI.run(["history", store])
        #expect(history.status == 0 && history.stdout.contains(#"externalID: "ext-0"  →  "e0""#), "\(history.stdout)")
    }

    @Test func datesOutsideTheSupportedRangeAreRefusedOnEveryWritePath() throws {
        let store = try makeHistoryStore()
        try CLI.run(["import", store, "--entity", "Post", "-"], stdin: posts(0..<2))
        for value in ["inf", "-inf", "1e300", "-1e300", "nan", "1e17", "-62167219201"] {
            expectOneLineError(try CLI.run(["update", store, "--entity", "Post", "--all", "--set", "createdAt=\(value)"]), contains: "outside 0000-9999")
        }
        let row = #"{"externalID": "far", "title": "Far", "createdAt": 1e300}"# + "\n"
        expectOneLineError(try CLI.run(["import", store, "--entity", "Post", "-"], stdin: row), contains: "1e+300 is outside the supported range")
        #expect(try CLI.run(["count", store, "--entity", "Post"]).stdout == "2\n")
        #expect(try CLI.run(["history", store, "--count"]).stdout == "1\n")
        // The ends of the range are dates.
        #expect(try CLI.run(["update", store, "--entity", "Post", "--where", "externalID == 'ext-0'", "--set", "createdAt=9999-12-31T23:59:59Z"]).status == 0)
        #expect(try CLI.run(["update", store, "--entity", "Post", "--where", "externalID == 'ext-1'", "--set", "createdAt=0000-01-01T00:00:00Z"]).status == 0)
        let query = try CLI.run(["query", store, "--entity", "Post", "--json"])
        #expect(query.stdout.contains("9999-12-31T23:59:59Z") && query.stdout.contains("0000-01-01T00:00:00Z"))
    }

    @Test func everyReaderSurvivesADateAnotherProgramStored() throws {
        let store = try makeHistoryStore()
        try CLI.run(["import", store, "--entity", "Post", "-"], stdin: posts(0..<3))
        try sqlite3(store, "UPDATE Post SET createdAt = 1e300 WHERE externalID = 'ext-0'; UPDATE Post SET createdAt = 9e999 WHERE externalID = 'ext-1'; UPDATE Post SET createdAt = -1e300 WHERE externalID = 'ext-2';")
        let note = "s since 1970 (outside 0000-9999)"
        for arguments in [["query", store, "--entity", "Post"], ["query", store, "--entity", "Post", "--json"],
                          ["export", store, "--snapshot", "--to", scratch.path("stream")]] {
            let result = try CLI.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            if arguments == ["query", store, "--entity", "Post"] {
                #expect(result.stdout.contains("1e+300 \(note)") && result.stdout.contains("inf \(note)") && result.stdout.contains("-1e+300 \(note)"))
            } else if arguments[0] == "query" {
                // JSON has the number, which readers parse (the note is for terminals).
                #expect(result.stdout.contains(#":1e+300"#) && result.stdout.contains(#":"Infinity""#) && result.stdout.contains(#":-1e+300"#), "\(result.stdout)")
            }
        }
        // Deleting the rows puts the dates into history, where every history reader meets them.
        #expect(try CLI.run(["delete", store, "--entity", "Post", "--all"]).status == 0)
        for arguments in [["history", store], ["history", store, "--json"], ["tail", store, "-n", "5"], ["tail", store, "-n", "5", "--json"],
                          ["export", store, "--to", "-"], ["export", store, "--to", "-", "--format", "debezium"], ["export", store, "--to", "-", "--format", "cloudevents"],
                          ["export", store, "--to", scratch.path("stream")], ["verify", scratch.path("stream")]] {
            let result = try CLI.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("Fatal error"))
            guard arguments[0] != "verify" && arguments[0] != "export" || arguments.contains("-") else { continue }
            let json = arguments.contains("--json") || arguments[0] == "export"
            #expect(result.stdout.contains(json ? #":1e+300"# : "1e+300 \(note)"), "\(arguments): \(result.stdout)")
        }
    }

    /// A value another program stored in a class its attribute's type does not hold is read
    /// as stored: text in a date or integer column was read as 0 (1970-01-01, width 0), 2.5 as 2.
    @Test func valuesOfAnotherStorageClassAreReadAsStored() throws {
        let store = try makeHistoryStore()
        try CLI.run(["import", store, "--entity", "Post", "-"], stdin: posts(0..<2))
        try sqlite3(store, "UPDATE Post SET createdAt = 'yesterday' WHERE externalID = 'ext-0'; INSERT INTO ImageData (width, height) VALUES ('wide', 2.5);")
        let posts = try CLI.run(["query", store, "--entity", "Post", "--json", "--where", "externalID == 'ext-0'"])
        #expect(posts.status == 0 && posts.stdout.contains(#""createdAt":"yesterday""#), "\(posts.stdout)\(posts.stderr)")
        let images = try CLI.run(["query", store, "--entity", "ImageData", "--json"])
        #expect(images.stdout.contains(#""width":"wide""#) && images.stdout.contains(#""height":2.5"#), "\(images.stdout)\(images.stderr)")
    }

    @Test func aBusyTimeoutOutOfRangeIsOneLine() throws {
        let store = try makeStore()
        for value in ["nan", "inf", "1e300", "99999999"] {
            expectOneLineError(try CLI.run(["count", store, "--entity", "Post", "--busy-timeout", value]), contains: "busy timeout")
        }
        #expect(try CLI.run(["count", store, "--entity", "Post", "--busy-timeout", "86400"]).status == 0)
    }

    /// Before the fix, ArgumentParser's errors printed the usage after the message: three or
    /// four lines for a missing value, an unknown option or argument, or a bad `--set`.
    @Test func usageErrorsAreOneLineNamingTheHelpToRead() throws {
        let store = try makeStore()
        let cases: [([String], String)] = [
            (["history", store, "--limit"], "Missing value for '--limit <limit>'; see 'tributary history --help'"),
            (["history", store, "--bogus"], "Unknown option '--bogus'; see 'tributary history --help'"),
            (["history"], "Missing expected argument '<store>'; see 'tributary history --help'"),
            (["nosuch"], "Unexpected argument 'nosuch'; see 'tributary --help'"),
            (["update", store, "--entity", "Post", "--set", "title"], "see 'tributary update --help'"),
        ]
        for (arguments, line) in cases {
            let result = try CLI.run(arguments)
            expectOneLineError(result, contains: line)
            #expect(result.status == 64, "\(arguments)")
        }
    }

    @Test func deeplyNestedPredicatesAreOneLine() throws {
        let store = try makeStore()
        let parentheses = String(repeating: "(", count: 5000) + "title == 'x'" + String(repeating: ")", count: 5000)
        let nots = String(repeating: "NOT ", count: 5000) + "title == 'x'"
        let braces = "title IN " + String(repeating: "{", count: 5000) + "'x'" + String(repeating: "}", count: 5000)
        for predicate in [parentheses, nots, braces] {
            expectOneLineError(try CLI.run(["count", store, "--entity", "Post", "--where", predicate]), contains: "nested more than 100 levels")
        }
        // Within the bound, a predicate SQLite finds too deep is still one line.
        let wide = (0..<1500).map { "title == '\($0)'" }.joined(separator: " OR ")
        let result = try CLI.run(["count", store, "--entity", "Post", "--where", wide])
        #expect(result.status == 0 || result.stderrLines.count == 1, "\(result.stderr)")
        #expect(!result.stderr.contains("Fatal error"))
    }
}
