import Foundation
import Testing

/// An adopted table keyed by its rowid because it declares a text or composite key: `tributary
/// history` and every stream format name each change's and each snapshot read's row by that
/// key, and the stream still verifies and replays.
@Suite struct DeclaredKeyCLITests {
    let scratch = Scratch()

    /// An adopted database where the `sqlite3` shell updated, inserted and deleted rows of
    /// `users` (key `email`) and `members` (key `org, login`).
    func adoptedAndWritten() throws -> String {
        let db = scratch.path("app.db")
        #expect(try CLI.sqlite3(db, """
            CREATE TABLE users (email TEXT PRIMARY KEY, name TEXT);
            CREATE TABLE members (org TEXT, login TEXT, role TEXT, PRIMARY KEY (org, login));
            INSERT INTO users VALUES ('ann@example.com', 'Ann'), ('bob@example.com', 'Bob');
            INSERT INTO members VALUES ('acme', 'ann', 'owner');
            """).status == 0)
        let adopted = try CLI.run(["adopt", db])
        #expect(adopted.status == 0, "\(adopted.stderr)")
        #expect(try CLI.sqlite3(db, """
            UPDATE users SET email = 'annie@example.com' WHERE email = 'ann@example.com';
            INSERT INTO users VALUES ('cy@example.com', 'Cy');
            DELETE FROM users WHERE email = 'bob@example.com';
            UPDATE members SET role = 'admin' WHERE login = 'ann';
            """).status == 0)
        return db
    }

    @Test func historyShowsTheKeyInTextAndJSON() throws {
        let db = try adoptedAndWritten()
        let json = try CLI.run(["history", db, "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        var keys: [String] = []
        for line in json.stdoutLines {
            let transaction = try CLI.json(line)
            for change in transaction["changes"] as? [[String: Any]] ?? [] {
                let key = (change["key"] as? [String: Any] ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                keys.append("\(change["type"] as? String ?? "?") \(change["entity"] as? String ?? "?") \(key.joined(separator: ","))")
            }
        }
        #expect(keys.suffix(4) == ["update users email=ann@example.com", "insert users email=cy@example.com", "delete users email=bob@example.com",
                                   "update members login=ann,org=acme"], "\(json.stdout)")
        let text = try CLI.run(["history", db])
        #expect(text.stdout.contains(#"  ~ update users/p1  [email "ann@example.com"]"#), "\(text.stdout)")
        #expect(text.stdout.contains(#"      email: "ann@example.com"  →  "annie@example.com""#), "\(text.stdout)")
        #expect(text.stdout.contains(#"  ~ update members/p1  [login "ann"  org "acme"]"#), "\(text.stdout)")
    }

    @Test func everyStreamFormatCarriesTheKey() throws {
        let db = try adoptedAndWritten()
        for format in ["native", "cloudevents", "debezium"] {
            let export = try CLI.run(["export", db, "--to", "-", "--format", format])
            #expect(export.status == 0, "\(export.stderr)")
            let records = export.stdoutLines.filter { $0.contains("annie@example.com") || $0.contains("cy@example.com") || $0.contains("\"role\"") }
            #expect(records.count == 3, "\(format): \(export.stdout)")
            #expect(records.first?.contains(#""key":{"email":"ann@example.com"}"#) == true, "\(format): the update names the row by its old key: \(records)")
            #expect(records.dropFirst().first?.contains(#""key":{"email":"cy@example.com"}"#) == true, "\(format): \(records)")
            #expect(records.last?.contains(#""key":{"login":"ann","org":"acme"}"#) == true, "\(format): \(records)")
            #expect(export.stdoutLines.contains { $0.contains(#""key":{"email":"bob@example.com"}"#) }, "\(format): the delete: \(export.stdout)")
        }
    }

    /// `export --snapshot` names each row it reads by its declared key as an insert's record
    /// does, in every format, and the snapshot still verifies and replays.
    @Test func snapshotRecordsCarryTheKeyInEveryFormatAndReplay() throws {
        let db = try adoptedAndWritten()
        for format in ["native", "cloudevents", "debezium"] {
            let export = try CLI.run(["export", db, "--to", "-", "--snapshot", "--format", format])
            #expect(export.status == 0, "\(export.stderr)")
            let reads = export.stdoutLines.filter { $0.contains(#""type":"read""#) || $0.contains(#""op":"r""#) }
            #expect(reads.count == 3, "\(format): \(export.stdout)")
            for key in [#""key":{"email":"annie@example.com"}"#, #""key":{"email":"cy@example.com"}"#, #""key":{"login":"ann","org":"acme"}"#] {
                #expect(reads.filter { $0.contains(key) }.count == 1, "\(format): \(key) in \(reads)")
            }
            let replica = try CLI.exportVerifyReplay(db, in: scratch, name: "stream-\(format)", arguments: ["--format", format, "--consumer", "export-\(format)"])
            let users = try CLI.run(["query", replica, "--entity", "users", "--json"])
            #expect(users.stdout.contains("annie@example.com") && users.stdout.contains("cy@example.com") && !users.stdout.contains("bob@example.com"),
                    "\(format): \(users.stdout)")
            let members = try CLI.run(["query", replica, "--entity", "members", "--json"])
            #expect(members.stdout.contains("acme") && members.stdout.contains("admin"), "\(format): \(members.stdout)")
        }
    }

    @Test func aSnapshotLeavesAnExcludedKeyAttributeOutOfTheKey() throws {
        let db = try adoptedAndWritten()
        let export = try CLI.run(["export", db, "--to", "-", "--snapshot", "--exclude", "members.login"])
        #expect(export.status == 0, "\(export.stderr)")
        let member = export.stdoutLines.filter { $0.contains(#""type":"read""#) && $0.contains(#""entity":"members""#) }
        #expect(member.count == 1 && member[0].contains(#""key":{"org":"acme"}"#) && !member[0].contains("login"), "\(member)")
    }
}
