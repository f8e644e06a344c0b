import Foundation
import Testing

/// `tributary adopt` through the binary: an app's database made by the `sqlite3` shell
/// becomes a store in place, the shell's writes show in history with their values, and
/// `--undo` gives back the same dump (issue 22).
@Suite struct AdoptCLITests {
    let scratch = Scratch()

    func makeApp() throws -> String {
        let db = scratch.path("app.db")
        let made = try CLI.sqlite3(db, """
            CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT NOT NULL UNIQUE, name TEXT);
            CREATE TABLE events (kind TEXT, at DATETIME DEFAULT CURRENT_TIMESTAMP);
            INSERT INTO users (email, name) VALUES ('ann@example.com', 'Ann'), ('bob@example.com', 'Bob');
            INSERT INTO events (kind) VALUES ('signup');
            """)
        #expect(made.status == 0, "\(made.stderr)")
        return db
    }

    @Test func anAppsDatabaseIsAdoptedFollowedAndUndone() throws {
        let db = try makeApp()
        let before = try CLI.sqlite3(db, ".dump").stdout
        let refused = try CLI.run(["history", db])
        #expect(refused.status != 0 && refused.stderr.contains("tributary adopt \(db)"), "the hint names adopt: \(refused.stderr)")

        let adopted = try CLI.run(["adopt", db])
        #expect(adopted.status == 0, "\(adopted.stderr)")
        #expect(adopted.stdout.contains("  users: key id, 2 attributes") && adopted.stdout.contains("  events: key rowid, 2 attributes"), "\(adopted.stdout)")
        #expect(adopted.stdout.contains("note: no declared key: rows are identified by their rowid"), "\(adopted.stdout)")
        #expect(adopted.stdout.contains("adopted \(db): store ") && adopted.stdout.contains("2 tables, history on"), "\(adopted.stdout)")

        #expect(try CLI.sqlite3(db, "UPDATE users SET name = 'Annie' WHERE email = 'ann@example.com';").status == 0)
        let update = try CLI.run(["update", db, "--entity", "users", "--where", "email == 'bob@example.com'", "--set", "name=Robert"])
        #expect(update.status == 0, "\(update.stderr)")
        let history = try CLI.run(["history", db])
        #expect(history.status == 0, "\(history.stderr)")
        #expect(history.stdout.contains("foreign") && history.stdout.contains(#"name: "Ann"  →  "Annie""#), "\(history.stdout)")
        #expect(history.stdout.contains(#"name: "Bob"  →  "Robert""#), "\(history.stdout)")
        let rows = try CLI.run(["query", db, "--entity", "users", "--json"])
        #expect(rows.stdout.contains("Annie") && rows.stdout.contains("Robert"), "\(rows.stdout)")

        let undone = try CLI.run(["adopt", db, "--undo"])
        #expect(undone.status == 0, "\(undone.stderr)")
        #expect(undone.stdout.contains("the database's own tables are as they were"))
        let after = try CLI.sqlite3(db, ".dump").stdout
        #expect(after == before.replacingOccurrences(of: "'Ann')", with: "'Annie')").replacingOccurrences(of: "'Bob')", with: "'Robert')"))
        #expect(try CLI.sqlite3(db, "SELECT count(*) FROM sqlite_master WHERE name LIKE '%tributary%';").stdout == "0\n")
    }

    @Test func badInputsGetOneLine() throws {
        let db = try makeApp()
        #expect(try CLI.sqlite3(db, "CREATE TABLE kv (k TEXT PRIMARY KEY, v) WITHOUT ROWID;").status == 0)
        let refused = try CLI.run(["adopt", db])
        #expect(refused.status != 0 && refused.stderrLines.count == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains("'kv' is a WITHOUT ROWID table") && refused.stderr.contains("--exclude kv"), "\(refused.stderr)")
        #expect(try CLI.sqlite3(db, "SELECT count(*) FROM sqlite_master WHERE name LIKE '%tributary%';").stdout == "0\n", "a refused adoption writes nothing")
        #expect(try CLI.run(["adopt", db, "--exclude", "kv"]).status == 0)

        let notADatabase = scratch.path("notes.txt")
        try Data("hello\n".utf8 + Data(repeating: 0x41, count: 200)).write(to: URL(fileURLWithPath: notADatabase))
        for (arguments, message) in [
            (["adopt", scratch.path("missing.db")], "no database at this path"),
            (["adopt", notADatabase], "not a SQLite database"),
            (["adopt", db, "--undo", "--include", "users"], "--undo takes no --include or --exclude"),
        ] {
            let result = try CLI.run(arguments)
            #expect(result.status != 0 && result.stderrLines.count == 1 && result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
    }
}
