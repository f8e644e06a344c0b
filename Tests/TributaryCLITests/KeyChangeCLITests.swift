import Foundation
import Testing

/// A primary key the `sqlite3` shell changes shows in `tributary history` as a delete and an
/// insert that name each other: in the text, `--oneline` and `--json` (issue 22).
@Suite struct KeyChangeCLITests {
    let scratch = Scratch()

    @Test func historyShowsTheDeleteAndTheInsertOfAKeyChangeLinked() throws {
        let db = scratch.path("app.db")
        #expect(try CLI.sqlite3(db, "CREATE TABLE counters (id INTEGER PRIMARY KEY, hits INTEGER NOT NULL); INSERT INTO counters VALUES (1, 10);").status == 0)
        let adopted = try CLI.run(["adopt", db])
        #expect(adopted.status == 0, "\(adopted.stderr)")
        #expect(try CLI.sqlite3(db, "UPDATE counters SET id = 7 WHERE id = 1;").status == 0)

        let json = try CLI.run(["history", db, "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let transaction = try CLI.json(try #require(json.stdoutLines.last))
        let changes = try #require(transaction["changes"] as? [[String: Any]])
        #expect(changes.map { $0["type"] as? String } == ["delete", "insert"])
        let deleted = try #require(changes.first), inserted = try #require(changes.last)
        #expect((deleted["movedTo"] as? String)?.hasSuffix("/counters/p7") == true && deleted["movedFrom"] == nil, "\(deleted)")
        #expect((inserted["movedFrom"] as? String)?.hasSuffix("/counters/p1") == true && inserted["movedTo"] == nil, "\(inserted)")
        #expect(inserted["movedFrom"] as? String == deleted["objectID"] as? String)

        let text = try CLI.run(["history", db])
        #expect(text.stdout.contains("  - delete counters/p1 (moved to counters/p7)  hits=10"), "\(text.stdout)")
        #expect(text.stdout.contains("  + insert counters/p7 (moved from counters/p1)  hits=10"), "\(text.stdout)")
        let oneline = try CLI.run(["history", db, "--oneline"])
        #expect(oneline.stdoutLines.last?.hasSuffix("1 insert, 1 delete, 1 key change") == true, "\(oneline.stdout)")
    }
}
