import Foundation
import Testing

/// `tributary migrate` through the binary: a dry run shows the plan and writes nothing, the
/// migration renames, converts and removes, and bad input is one line (issue 23).
@Suite struct MigrateCLITests {
    let scratch = Scratch()

    static let v1 = """
        entities:
          Post:
            attributes:
              title: { type: string, optional: false }
              body: string
              views: integer
              legacy: string
        """

    static let v2 = """
        entities:
          Article:
            renamedFrom: Post
            attributes:
              title: { type: string, optional: false }
              content: { type: string, renamedFrom: body }
              views: double
        """

    /// A store of v1 with two posts, and the path of the v2 model.
    func makeStore() throws -> (store: String, model: String) {
        let store = scratch.path("notes.sqlite")
        let made = try CLI.run(["init", store, "--model", scratch.write("v1.yml", Self.v1), "--history"])
        #expect(made.status == 0, "\(made.stderr)")
        let rows = #"{"title": "a", "body": "first", "views": 3, "legacy": "x"}"# + "\n" + #"{"title": "b", "body": "second", "views": 4}"# + "\n"
        let imported = try CLI.run(["import", store, "--entity", "Post", "-"], stdin: rows)
        #expect(imported.status == 0, "\(imported.stderr)")
        return (store, scratch.write("v2.yml", Self.v2))
    }

    func expectOneLineError(_ result: CLIResult, contains: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status != 0, sourceLocation: sourceLocation)
        #expect(result.stderrLines.count == 1, "stderr was: \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.contains(contains), "stderr was: \(result.stderr)", sourceLocation: sourceLocation)
    }

    @Test func aDryRunThenTheMigrationThenNothingToMigrate() throws {
        let (store, model) = try makeStore()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: store))
        let dry = try CLI.run(["migrate", store, "--model", model, "--dry-run", "--verbose"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdoutLines.prefix(4) == ["would migrate: renamed entity Post to Article", "would migrate: renamed Post.body to Article.content",
                                              "would migrate: changed Article.views from integer to double", "would migrate: removed Article.legacy"], "\(dry.stdout)")
        #expect(dry.stdout.contains(#"  ALTER TABLE "Post" RENAME TO "Article";"#), "the SQL with --verbose: \(dry.stdout)")
        #expect(dry.stdoutLines.last == "dry run: 4 changes, nothing written to \(store)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == bytes, "a dry run writes nothing")

        let migrated = try CLI.run(["migrate", store, "--model", model, "--json"])
        #expect(migrated.status == 0, "\(migrated.stderr)")
        let json = try CLI.json(migrated.stdout)
        #expect(json["dryRun"] as? Bool == false)
        #expect((json["changes"] as? [String])?.count == 4)

        let rows = try CLI.run(["query", store, "--entity", "Article", "--json", "--sort", "title"])
        #expect(rows.status == 0, "\(rows.stderr)")
        #expect(rows.stdoutLines.count == 2)
        #expect(rows.stdoutLines.first?.contains(#"/Article/p1","title":"a","content":"first","views":3.0}"#) == true, "\(rows.stdout)")
        let model2 = try CLI.run(["model", store])
        #expect(model2.stdout.contains("renamedFrom: body"), "the cached model keeps renamedFrom: \(model2.stdout)")

        let again = try CLI.run(["migrate", store, "--model", model])
        #expect(again.status == 0 && again.stdout.hasPrefix("nothing to migrate"), "\(again.stdout)")
        // Other programs' writes after it are recorded under the new names.
        #expect(try CLI.sqlite3(store, "UPDATE Article SET content = 'shell' WHERE title = 'b';").status == 0)
        let history = try CLI.run(["history", store, "--json"])
        #expect(history.stdoutLines.last?.contains(#""entity":"Article""#) == true && history.stdoutLines.last?.contains(#""content":{"before":"second","after":"shell"}"#) == true,
                "\(history.stdoutLines.last ?? "")")
    }

    @Test func initRefusesTheSameModelAndNamesMigrate() throws {
        let (store, model) = try makeStore()
        expectOneLineError(try CLI.run(["init", store, "--model", model]), contains: "run tributary migrate STORE --model NEW.yml")
    }

    @Test func aValueThatDoesNotConvertIsOneLineAndTheStoreStays() throws {
        let (store, _) = try makeStore()
        let model = scratch.write("bad.yml", Self.v1.replacingOccurrences(of: "body: string", with: "body: integer"))
        let before = try CLI.sqlite3(store, ".dump").stdout
        expectOneLineError(try CLI.run(["migrate", store, "--model", model]), contains: #"cannot change Post.body from string to integer: tributary://"#)
        #expect(try CLI.sqlite3(store, ".dump").stdout == before)
    }

    @Test func badInputIsOneLine() throws {
        let (store, model) = try makeStore()
        expectOneLineError(try CLI.run(["migrate", store, "--model", scratch.path("missing.yml")]), contains: "cannot read model file")
        expectOneLineError(try CLI.run(["migrate", store, "--model", scratch.write("broken.yml", "entities: [")]), contains: "not valid YAML")
        expectOneLineError(try CLI.run(["migrate", scratch.path("none.sqlite"), "--model", model]), contains: "no store at this path")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("none.sqlite")), "a migration never creates a store")
        let app = scratch.path("app.db")
        #expect(try CLI.sqlite3(app, "CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT);").status == 0)
        #expect(try CLI.run(["adopt", app]).status == 0)
        let people = scratch.write("people.yml", "entities:\n  people:\n    tableKey: id\n    attributes:\n      fullName: { type: string, renamedFrom: name }\n")
        expectOneLineError(try CLI.run(["migrate", app, "--model", people]), contains: "run tributary adopt \(app) again")
    }
}
