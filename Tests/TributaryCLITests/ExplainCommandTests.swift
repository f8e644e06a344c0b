import Foundation
import Testing

/// `tributary explain`: the SQL of a fetch and SQLite's plan, where indexes show.
@Suite struct ExplainCommandTests {
    let scratch = Scratch()

    /// A store of notes whose model has, or has not, an index on `title`.
    func makeStore(indexed: Bool) throws -> String {
        let model = scratch.write("model-\(indexed).yml", """
        entities:
          Note:
            attributes:
              title: string
              body: string
        \(indexed ? "    indexes: [[title]]" : "")
        """)
        let store = scratch.path("notes-\(indexed).sqlite")
        let result = try CLI.run(["init", store, "--model", model])
        #expect(result.status == 0, "\(result.stderr)")
        return store
    }

    @Test func aMissingIndexShowsAsAScanAndAnIndexAsASearch() throws {
        let arguments = ["--entity", "Note", "--where", "title == 'groceries'"]
        let scan = try CLI.run(["explain", try makeStore(indexed: false)] + arguments)
        #expect(scan.status == 0, "\(scan.stderr)")
        #expect(scan.stdoutLines == [
            #"SQL: SELECT t0."_pk", t0."title", t0."body" FROM "Note" t0 WHERE t0."title" = ? ORDER BY t0."_pk" ASC"#,
            "Arguments: 'groceries'",
            "QUERY PLAN",
            "`--SCAN t0",
        ])

        let search = try CLI.run(["explain", try makeStore(indexed: true)] + arguments)
        #expect(search.status == 0, "\(search.stderr)")
        #expect(search.stdoutLines.last == "`--SEARCH t0 USING INDEX Note_index_title (title=?)")
    }

    @Test func sortsAndRelationshipsShowInThePlan() throws {
        let store = scratch.path("blog.sqlite")
        #expect(try CLI.run(["init", store, "--model", CLI.blogModel]).status == 0)
        let result = try CLI.run(["explain", store, "--entity", "Post", "--where", "ANY tags.name == 'swift'", "--sort", "title:desc", "--limit", "5"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(#"ORDER BY t0."title" DESC, t0."_pk" ASC LIMIT ? OFFSET ?"#))
        #expect(result.stdout.contains("Arguments: 'swift', 5, 0"))
        #expect(result.stdoutLines.contains("|--SCAN t0"))
        #expect(result.stdout.contains("SEARCH t1 USING COVERING INDEX Tag_unique_name (name=?)"))
        #expect(result.stdoutLines.last == "`--USE TEMP B-TREE FOR ORDER BY")
    }

    @Test func badInputIsOneLine() throws {
        let store = try makeStore(indexed: false)
        let unknown = try CLI.run(["explain", store, "--entity", "Nope"])
        #expect(unknown.status != 0)
        #expect(unknown.stderrLines.count == 1)
        #expect(unknown.stderr.contains("unknown entity 'Nope'"))
        let badSort = try CLI.run(["explain", store, "--entity", "Note", "--sort", "missing"])
        #expect(badSort.status != 0)
        #expect(badSort.stderrLines.count == 1)
        #expect(badSort.stderr.contains("cannot sort by 'missing'"))
    }
}
