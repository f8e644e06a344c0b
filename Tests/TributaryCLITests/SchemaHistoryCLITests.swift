import Foundation
import Testing

/// Schema transactions through the binary (issue 23): `history` shows them (and
/// `--schema-changes` keeps or drops them), `history --json` carries them, and
/// `model --at` prints the model in force at a token.
@Suite struct SchemaHistoryCLITests {
    let scratch = Scratch()

    @Test func historyShowsModelChangesAndModelAtPrintsTheModelThen() throws {
        let db = scratch.path("app.db")
        #expect(try CLI.sqlite3(db, "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO items VALUES (1, 'one');").status == 0)
        #expect(try CLI.run(["adopt", db]).status == 0)
        #expect(try CLI.run(["update", db, "--entity", "items", "--where", "name == 'one'", "--set", "name=uno"]).status == 0)
        let before = try CLI.run(["token", db]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try CLI.sqlite3(db, "ALTER TABLE items ADD COLUMN price REAL;").status == 0)

        let schema = try CLI.run(["history", db, "--schema-changes", "only"])
        #expect(schema.status == 0, "\(schema.stderr)")
        #expect(schema.stdout.contains("# schema added items.price") && schema.stdout.contains("made by another program"), "\(schema.stdout)")
        #expect(!schema.stdout.contains("~ update items/p1"), "\(schema.stdout)")
        let data = try CLI.run(["history", db, "--schema-changes", "exclude", "--oneline"])
        #expect(data.stdout.contains("1 update") && !data.stdout.contains("schema:"), "\(data.stdout)")
        let all = try CLI.run(["history", db, "--oneline"])
        #expect(all.stdout.contains("schema: added items.price"), "\(all.stdout)")
        let json = try CLI.run(["history", db, "--schema-changes", "only", "--json"])
        let change = try #require(try CLI.json(json.stdout.trimmingCharacters(in: .whitespacesAndNewlines))["schemaChange"] as? [String: Any], "\(json.stdout)")
        #expect(change["changes"] as? [String] == ["added items.price"] && change["detected"] as? Bool == true)

        let then = try CLI.run(["model", db, "--at", before])
        #expect(then.status == 0 && !then.stdout.contains("price"), "\(then.stdout)\(then.stderr)")
        let now = try CLI.run(["model", db, "--at", try CLI.run(["token", db]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)])
        #expect(now.stdout.contains("price"), "\(now.stdout)")
        let bad = try CLI.run(["history", db, "--schema-changes", "sometimes"])
        #expect(bad.status != 0 && bad.stderrLines.count == 1 && bad.stderr.contains("include, exclude or only"), "\(bad.stderr)")
    }
}
