import Foundation
import Testing
import TributaryTestSupport

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

    static let usersSchema = "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT);"

    /// The stream of an adopted source where another program made a table `tags` after a
    /// user's row (adopted again), then wrote a tag; its directory.
    func streamOfATableMadeLater() throws -> String {
        let source = scratch.path("source.db"), stream = scratch.path("tables-stream")
        #expect(try CLI.sqlite3(source, Self.usersSchema).status == 0)
        #expect(try CLI.run(["adopt", source]).status == 0)
        #expect(try CLI.sqlite3(source, "INSERT INTO users (name) VALUES ('ann'); CREATE TABLE tags (id INTEGER PRIMARY KEY, label TEXT);").status == 0)
        #expect(try CLI.run(["adopt", source]).status == 0)
        #expect(try CLI.sqlite3(source, "INSERT INTO tags (label) VALUES ('red');").status == 0)
        #expect(try CLI.run(["export", source, "--to", stream]).status == 0)
        return stream
    }

    /// A table another program makes in the source reaches an adopted replica as a model
    /// change that Tributary cannot make there (it never changes an adopted database's
    /// tables): the replay stops at it with one line saying what to do, and once the table is
    /// made and adopted in the replica, `--resume` brings the rest, the new table's rows too.
    @Test func aTableAnotherProgramMakesStopsTheReplayIntoAnAdoptedReplicaUntilItIsMadeThere() throws {
        let replica = scratch.path("replica.db")
        #expect(try CLI.sqlite3(replica, Self.usersSchema).status == 0)
        #expect(try CLI.run(["adopt", replica]).status == 0)
        let stream = try streamOfATableMadeLater()
        let stopped = try CLI.run(["replay", stream, "--into", replica])
        let error = stopped.stderrLines.filter { !$0.hasPrefix("warning:") }
        #expect(stopped.status != 0 && error.count == 1 && error[0].contains("added entity tags") && error[0].contains("needs the replica's tables changed")
                && error[0].contains("run tributary adopt \(replica), then replay again with --resume"), "\(stopped.stderr)")
        #expect(try CLI.sqlite3(replica, "CREATE TABLE tags (id INTEGER PRIMARY KEY, label TEXT);").status == 0)
        #expect(try CLI.run(["adopt", replica]).status == 0)
        let resumed = try CLI.run(["replay", stream, "--into", replica, "--resume"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(try CLI.sqlite3(replica, "SELECT name FROM users; SELECT label FROM tags;").stdout == "ann\nred\n")
    }

    /// The same model change met by a replay into a new file: the failed replay removes the
    /// file it made, so its one line says how to make the replica through the transaction
    /// before the change; doing what it says brings every row.
    @Test func aReplayIntoANewFileThatMeetsSuchAChangeSaysHowToMakeTheReplicaFirst() throws {
        let replica = scratch.path("new-replica.db")
        let stream = try streamOfATableMadeLater()
        let stopped = try CLI.run(["replay", stream, "--into", replica])
        let error = stopped.stderrLines.filter { !$0.hasPrefix("warning:") }
        #expect(stopped.status != 0 && error.count == 1 && !FileManager.default.fileExists(atPath: replica), "\(stopped.stderr)")
        let until = error.first.flatMap { line in line.range(of: #"--until \d+-[0-9a-f]{8}"#, options: .regularExpression).map { String(line[$0].dropFirst(8)) } }
        #expect(until != nil, "the line names the token to replay through: \(stopped.stderr)")
        guard let until else { return }
        #expect(try CLI.run(["replay", stream, "--into", replica, "--until", until]).status == 0)
        #expect(try CLI.sqlite3(replica, "CREATE TABLE tags (id INTEGER PRIMARY KEY, label TEXT);").status == 0)
        #expect(try CLI.run(["adopt", replica]).status == 0)
        let resumed = try CLI.run(["replay", stream, "--into", replica, "--resume"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(try CLI.sqlite3(replica, "SELECT name FROM users; SELECT label FROM tags;").stdout == "ann\nred\n")
    }

    /// `import` says how many rows the database's own trigger skipped (`RAISE(IGNORE)`),
    /// where it counted them as updated.
    @Test func importSaysWhatTheDatabasesTriggersSkipped() throws {
        let db = scratch.path("skip.db")
        #expect(try CLI.sqlite3(db, "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); CREATE TRIGGER notes_skip BEFORE INSERT ON notes WHEN NEW.text = 'spam' BEGIN SELECT RAISE(IGNORE); END;").status == 0)
        #expect(try CLI.run(["adopt", db]).status == 0)
        let imported = try CLI.run(["import", db, "--entity", "notes"], stdin: #"{"text":"a"}"# + "\n" + #"{"text":"spam"}"# + "\n")
        #expect(imported.status == 0 && imported.stdout.contains("imported 1 notes row (1 inserted, 0 updated, 1 skipped by the database's own triggers)"), "\(imported.stdout) \(imported.stderr)")
    }

    /// An insert whose values history has only in part (another program dropped a column's
    /// capture trigger, then inserted and updated the row) says which it does not have, where
    /// it printed the others as if they were all.
    @Test func anInsertWithValuesNotRecordedSaysWhich() throws {
        let db = scratch.path("partial.db")
        #expect(try CLI.sqlite3(db, "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, score INT);").status == 0)
        #expect(try CLI.run(["adopt", db]).status == 0)
        let trigger = try CLI.sqlite3(db, "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 't' AND name LIKE '%\\_u1' ESCAPE '\\';").stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!trigger.isEmpty)
        #expect(try CLI.sqlite3(db, "DROP TRIGGER \"\(trigger)\"; INSERT INTO t VALUES (2, 'b', 6); UPDATE t SET name = 'c' WHERE id = 2;").status == 0)
        let history = try CLI.run(["history", db])
        #expect(history.stdout.contains(#"+ insert t/p2  name="b"  (values not recorded: score)"#), "\(history.stdout) \(history.stderr)")
    }

    /// `tributary update` on an adopted database runs its own triggers (its audit trigger
    /// writes a row, recorded with the update; its full-text index follows). A replay into an
    /// adopted replica with the same triggers does not run them: the stream carries the audit
    /// rows already. Run (as the first version of this fix did), the replica's trigger made
    /// them again under other keys: four audit rows where the source had two.
    @Test func tributarysWritesRunTheDatabasesTriggersAndAReplayDoesNotRunTheReplicas() throws {
        let schema = """
            CREATE TABLE docs (id INTEGER PRIMARY KEY, body TEXT);
            CREATE VIRTUAL TABLE docs_fts USING fts5(body, content='docs', content_rowid='id');
            CREATE TRIGGER docs_ai AFTER INSERT ON docs BEGIN INSERT INTO docs_fts(rowid, body) VALUES (new.id, new.body); END;
            CREATE TRIGGER docs_au AFTER UPDATE ON docs BEGIN
                INSERT INTO docs_fts(docs_fts, rowid, body) VALUES ('delete', old.id, old.body); INSERT INTO docs_fts(rowid, body) VALUES (new.id, new.body);
            END;
            CREATE TABLE audit (id INTEGER PRIMARY KEY, what TEXT);
            CREATE TRIGGER docs_audit_insert AFTER INSERT ON docs BEGIN INSERT INTO audit (what) VALUES ('insert ' || new.id); END;
            CREATE TRIGGER docs_audit AFTER UPDATE OF body ON docs BEGIN INSERT INTO audit (what) VALUES ('body of ' || new.id); END;
            """
        let source = scratch.path("triggers-source.db"), replica = scratch.path("triggers-replica.db"), stream = scratch.path("triggers-stream")
        for db in [source, replica] { #expect(try CLI.sqlite3(db, schema).status == 0) }
        #expect(try CLI.sqlite3(source, "INSERT INTO docs (body) VALUES ('world'), ('moon');").status == 0)
        #expect(try CLI.run(["adopt", source]).status == 0 && CLI.run(["adopt", replica]).status == 0)
        #expect(try CLI.run(["update", source, "--entity", "docs", "--where", "body == 'world'", "--set", "body=galaxy"]).status == 0)
        let index = try CLI.sqlite3(source, "SELECT rowid FROM docs_fts WHERE docs_fts MATCH 'galaxy'; SELECT count(*) FROM docs_fts WHERE docs_fts MATCH 'world';"
                                    + " INSERT INTO docs_fts(docs_fts, rank) VALUES ('integrity-check', 1);")
        #expect(index.status == 0 && index.stdout == "1\n0\n", "the source's index follows: \(index.stdout) \(index.stderr)")
        let tables = "SELECT id, body FROM docs ORDER BY id; SELECT id, what FROM audit ORDER BY id;"
        #expect(try CLI.sqlite3(source, tables).stdout == "1|galaxy\n2|moon\n1|insert 1\n2|insert 2\n3|body of 1\n")
        #expect(try CLI.run(["export", source, "--to", stream, "--snapshot"]).status == 0)
        let replayed = try CLI.run(["replay", stream, "--into", replica, "--resume"])
        #expect(replayed.status == 0, "\(replayed.stderr)")
        #expect(try CLI.sqlite3(replica, tables).stdout == CLI.sqlite3(source, tables).stdout, "the replica's tables equal the source's")
    }

    /// Values another program stored in another class than their column's type are replayed
    /// as the source held them: a replica with the same tables equals the source, value for
    /// value and class for class. Before, replay refused the first such record with one line
    /// (`'v' holds integer(42), which a string attribute does not store`), so an adopted
    /// database with numbers in an untyped column could not be replayed at all; and earlier
    /// still a lenient parse wrote NULL, an infinity and 8.0 for 'nan', 'inf' and '0x1p3'.
    /// `verify` notes them. Through the native reader's fast path (inserts) and the general
    /// one (an update).
    @Test func valuesOfAnotherClassAreReplayedAsTheSourceHeldThem() throws {
        let source = scratch.path("reals.db"), replica = scratch.path("reals-replica.db"), stream = scratch.path("reals-stream")
        let table = "CREATE TABLE m (id INTEGER PRIMARY KEY, x REAL, v, d DATETIME, i INTEGER, f BOOLEAN);"
        for db in [source, replica] { #expect(try CLI.sqlite3(db, table).status == 0) }
        #expect(try CLI.run(["adopt", source]).status == 0 && CLI.run(["adopt", replica]).status == 0)
        #expect(try CLI.sqlite3(source, """
            INSERT INTO m VALUES (1, 2.5, 'text', '2024-05-01', 3, 1), (2, 'nan', 42, 1714521600, 'abc', 7), (3, 'inf', 1.5, 2.5, 'x', 'yes'), (4, '0x1p3', NULL, NULL, NULL, NULL);
            UPDATE m SET v = 7, i = 'changed' WHERE id = 1;
            """).status == 0)
        #expect(try CLI.run(["export", source, "--to", stream]).status == 0)
        let verified = try CLI.run(["verify", stream])
        #expect(verified.status == 0 && verified.stderr.contains("note: 13 values of another type") && verified.stderr.contains(#"has 'x' as the text "nan", in a double attribute"#), "\(verified.stderr)")
        let replayed = try CLI.run(["replay", stream, "--into", replica, "--resume"])
        #expect(replayed.status == 0, "\(replayed.stderr)")
        let rows = "SELECT id, quote(x), typeof(x), quote(v), typeof(v), quote(d), typeof(d), quote(i), typeof(i), quote(f), typeof(f) FROM m ORDER BY id;"
        let expected = try CLI.sqlite3(source, rows).stdout
        #expect(expected.contains("'nan'|text|42|integer") && expected.contains("1|2.5|real|7|integer"), "\(expected)")
        #expect(try CLI.sqlite3(replica, rows).stdout == expected, "the replica holds what the source does")
    }

    /// A blob another program stored in an untyped or `TEXT` column (a string attribute) is
    /// written `{"base64":"…"}` in native and CloudEvents streams and `history --json`, apart
    /// from text, and replayed as the blob; a binary attribute's bytes stay a base64 string.
    /// Before, it was written as base64 text, as a binary attribute's bytes are, and replay
    /// wrote that text: x'CAFE' in the source became 'yv4=' in the replica.
    @Test(arguments: ["native", "cloudevents"])
    func aBlobInATextColumnIsMarkedAndReplayedAsTheBlob(format: String) throws {
        let source = scratch.path("blobs-\(format).db"), replica = scratch.path("blobs-\(format)-replica.db"), stream = scratch.path("blobs-\(format)-stream")
        let table = "CREATE TABLE kv (id INTEGER PRIMARY KEY, v, n TEXT, b BLOB); CREATE TABLE u (k TEXT PRIMARY KEY, v);"
        for db in [source, replica] { #expect(try CLI.sqlite3(db, table).status == 0) }
        #expect(try CLI.run(["adopt", source]).status == 0 && CLI.run(["adopt", replica]).status == 0)
        #expect(try CLI.sqlite3(source, """
            INSERT INTO kv VALUES (1, x'cafe', x'0102', x'00ff'), (2, 'yv4=', 'text', x'41'), (3, x'', NULL, NULL);
            UPDATE kv SET v = x'beef', n = 'now text' WHERE id = 1;
            DELETE FROM kv WHERE id = 3;
            INSERT INTO u VALUES (x'cafe', 'a'); UPDATE u SET v = 'b';
            """).status == 0)
        let history = try CLI.run(["history", source, "--json"])
        #expect(history.stdout.contains(#""v":{"base64":"yv4="}"#) && history.stdout.contains(#""b":"AP8=""#) && history.stdout.contains(#""v":"yv4=""#), "\(history.stdout)")
        #expect(try CLI.run(["tail", source, "--json"]).stdout.contains(#""v":{"base64":"yv4="}"#), "tail --json as history --json")
        // query and show --json as history --json (before, a plain base64 string, like text).
        let queried = try CLI.run(["query", source, "--entity", "kv", "--json"]).stdout
        #expect(queried.contains(#""v":{"base64":"vu8="}"#) && queried.contains(#""n":"now text""#) && queried.contains(#""b":"AP8=""#), "\(queried)")
        let first = try #require(CLI.json(String(history.stdout.split(separator: "\n")[0]))["token"] as? String)
        #expect(try CLI.run(["query", source, "--entity", "kv", "--json", "--as-of", first]).stdout.contains(#""v":{"base64":"yv4="}"#))
        let shown = try CLI.run(["show", source, "--json", try #require(CLI.json(String(queried.split(separator: "\n")[0]))["objectID"] as? String)]).stdout
        #expect(shown.contains(#""v":{"base64":"vu8="}"#), "\(shown)")
        let printed = try CLI.run(["export", source, "--to", "-", "--format", format])
        #expect(printed.stdout.contains(#""n":{"base64":"AQI="}"#) && printed.stdout.contains(#""after":{"base64":"vu8="}"#), "\(printed.stdout)")
        #expect(printed.stdout.components(separatedBy: #""key":{"k":{"base64":"yv4="}}"#).count == 3, "the declared key too, at the insert and the update: \(printed.stdout)")
        #expect(try CLI.run(["export", source, "--to", stream, "--format", format]).status == 0)
        let verified = try CLI.run(["verify", stream])
        #expect(verified.status == 0 && verified.stderr.contains("note: 5 values of another type") && verified.stderr.contains("'v' as a blob of 2 bytes"), "\(verified.stderr)")
        let replayed = try CLI.run(["replay", stream, "--into", replica, "--resume"])
        #expect(replayed.status == 0, "\(replayed.stderr)")
        let rows = "SELECT id, quote(v), quote(n), quote(b) FROM kv ORDER BY id; SELECT quote(k), v FROM u;"
        let expected = try CLI.sqlite3(source, rows).stdout
        #expect(expected == "1|X'BEEF'|'now text'|X'00FF'\n2|'yv4='|'text'|X'41'\nX'CAFE'|b\n", "\(expected)")
        #expect(try CLI.sqlite3(replica, rows).stdout == expected, "the replica holds the blobs as blobs")
    }

    /// Blobs are marked by the model their change was made under, not today's: after another
    /// program renamed a text column to the binary one's old name, `history --json`, `tail
    /// --json` and an export of a time window (which holds no schema record) still mark the
    /// old change's text column and not its binary one. Found by review: they marked every
    /// transaction by the store's current model, and a filtered export by its first model.
    @Test func blobsAreMarkedByTheModelTheirChangeWasMadeUnder() throws {
        let db = scratch.path("renamed-blobs.db")
        #expect(try CLI.sqlite3(db, "CREATE TABLE kv (id INTEGER PRIMARY KEY, v TEXT, b BLOB);").status == 0)
        #expect(try CLI.run(["adopt", db]).status == 0)
        #expect(try CLI.sqlite3(db, "INSERT INTO kv VALUES (1, x'cafe', x'00ff');").status == 0)
        #expect(try CLI.sqlite3(db, "ALTER TABLE kv RENAME COLUMN b TO c; ALTER TABLE kv RENAME COLUMN v TO b;").status == 0)
        #expect(try CLI.run(["adopt", db]).status == 0)
        #expect(try CLI.sqlite3(db, "INSERT INTO kv VALUES (2, x'beef', x'01');").status == 0)
        let before = #""after":{"v":{"base64":"yv4="},"b":"AP8="}"#, after = #""after":{"b":{"base64":"vu8="},"c":"AQ=="}"#
        for command in [["history", db, "--json"], ["tail", db, "--json"], ["export", db, "--to", "-", "--since", "2000-01-01T00:00:00Z"]] {
            let out = try CLI.run(command).stdout
            #expect(out.contains(before) && out.contains(after), "\(command[0]): \(out)")
        }
    }

    /// A command pointed at a database that is not a store (not adopted yet) refuses it with
    /// one line and leaves it as it was: before, it switched the file to WAL first, for good.
    @Test(arguments: [["history"], ["tail"], ["token"], ["export", "--to", "-"], ["audit", "verify"], ["query", "--entity", "t"], ["search", "foo"]])
    func aCommandOnAPlainDatabaseLeavesItsJournalModeAlone(command: [String]) throws {
        let db = scratch.path("plain-\(command[0]).db")
        #expect(try CLI.sqlite3(db, "CREATE TABLE t (id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1);").status == 0)
        let refused = try CLI.run(command.prefix(1) + (command[0] == "audit" ? [command[1], db] : [db] + command.dropFirst()))
        let reason = command[0] == "search" ? "not a full-text index" : "not a Tributary store"
        #expect(refused.status != 0 && refused.stderrLines.count == 1 && refused.stderr.contains(reason), "\(refused.stderr)")
        #expect(try CLI.sqlite3(db, "PRAGMA journal_mode;").stdout == "delete\n")
        #expect(!FileManager.default.fileExists(atPath: db + "-wal"))
    }

    /// A database with a table named as Tributary names its own is refused with one line
    /// naming it: before, the capture log's look-alike gave seven lines of SQL, and the
    /// metadata's look-alike advice to run the adopt that had just failed.
    @Test(arguments: ["_tributary_capture_log", "_tributary_metadata"])
    func aTableNamedAsTributarysOwnIsRefusedWithOneLine(table: String) throws {
        let db = scratch.path("lookalike\(table).db")
        #expect(try CLI.sqlite3(db, "CREATE TABLE \(table) (x); CREATE TABLE t (id INTEGER PRIMARY KEY);").status == 0)
        let before = try CLI.sqlite3(db, ".dump").stdout
        let refused = try CLI.run(["adopt", db])
        #expect(refused.status != 0 && refused.stderrLines.count == 1 && refused.stderr.contains("the database has \(table), named as Tributary names its own"), "\(refused.stderr)")
        #expect(try CLI.sqlite3(db, ".dump").stdout == before)
    }

    /// A `tributary run` following an adopted database while it is adopted again (another
    /// program added a column) ends with one line rather than undo the new capture; run
    /// again, it delivers the new column's change.
    @Test func aRunningPipelineEndsWhenTheDatabaseIsAdoptedAgainAndTheNextRunCarriesOn() async throws {
        let db = try makeApp()
        #expect(try CLI.run(["adopt", db]).status == 0)
        let file = scratch.write("follow.yml", "source: {store: \(db)}\nsinks:\n  - type: stdout\n")
        let log = URL(fileURLWithPath: scratch.path("run.log"))
        let run = try TributaryProcess.start(["run", file], environment: [:], output: log)
        defer { if run.isRunning { kill(run.processIdentifier, SIGKILL) } }
        #expect(try CLI.sqlite3(db, "UPDATE users SET name = 'Annie' WHERE id = 1;").status == 0)
        #expect(await Wait.until(.seconds(30)) { ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains("Annie") }, "the pipeline follows")
        #expect(try CLI.sqlite3(db, "ALTER TABLE users ADD COLUMN nickname TEXT;").status == 0)
        #expect(try CLI.run(["adopt", db]).status == 0)
        #expect(try CLI.sqlite3(db, "UPDATE users SET nickname = 'nan' WHERE id = 1;").status == 0)
        #expect(await Wait.until(.seconds(30)) { !run.isRunning }, "the stale pipeline ends")
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        #expect(run.terminationStatus != 0 && output.contains("another process changed the store's model since this one opened it"), "\(output)")
        let again = try CLI.run(["run", file, "--once"])
        #expect(again.status == 0 && again.stdout.contains("nan"), "the next run delivers the new column's change: \(again.stdout) \(again.stderr)")
    }

    /// A `WITHOUT ROWID` table through every command: numbered at adopt, the shell's writes in
    /// history by the declared key, `query` through its key's collation, Tributary's own
    /// `update`, `import` and `delete` recorded under their author, a stream that verifies and
    /// replays into an adopted replica with the same numbers (a new file is refused with one
    /// line), and `--undo` gives back the dump.
    @Test func aWithoutRowidTableIsAdoptedFollowedWrittenAndReplayed() throws {
        let db = scratch.path("kv.db")
        let schema = "CREATE TABLE tags (name TEXT COLLATE NOCASE PRIMARY KEY, color TEXT) WITHOUT ROWID;"
        #expect(try CLI.sqlite3(db, schema + "INSERT INTO tags VALUES ('red', '#f00');").status == 0)
        let before = try CLI.sqlite3(db, ".dump").stdout
        let adopted = try CLI.run(["adopt", db])
        #expect(adopted.status == 0 && adopted.stdout.contains("a WITHOUT ROWID table: its rows are numbered in _tributary_keys_tags"), "\(adopted.stdout) \(adopted.stderr)")
        #expect(try CLI.sqlite3(db, "UPDATE tags SET name = 'crimson', color = '#e00' WHERE name = 'RED'; INSERT INTO tags VALUES ('blue', NULL);").status == 0)
        let history = try CLI.run(["history", db])
        #expect(history.stdout.contains(#"~ update tags/p1  [name "red"]"#) && history.stdout.contains(#"name: "red"  →  "crimson""#)
                && history.stdout.contains(#"+ insert tags/p2  name="blue""#), "\(history.stdout) \(history.stderr)")
        let rows = try CLI.run(["query", db, "--entity", "tags", "--where", "name == 'CRIMSON'", "--json"])
        #expect(rows.status == 0 && rows.stdout.contains("#e00"), "\(rows.stdout) \(rows.stderr)")

        let update = try CLI.run(["update", db, "--entity", "tags", "--where", "name == 'BLUE'", "--set", "color=#00f", "--author", "ops"])
        #expect(update.status == 0, "\(update.stderr)")
        let lines = scratch.path("tags.ndjson")
        try ##"{"name":"green","color":"#0f0"}"##.appending("\n").write(toFile: lines, atomically: true, encoding: .utf8)
        let imported = try CLI.run(["import", db, "--entity", "tags", lines])
        #expect(imported.status == 0, "\(imported.stderr)")
        let own = try CLI.run(["history", db, "--author", "ops"])
        #expect(own.stdout.contains(#"~ update tags/p2  [name "blue"]"#) && own.stdout.contains(##"color: nil  →  "#00f""##), "\(own.stdout) \(own.stderr)")
        #expect(try CLI.sqlite3(db, "SELECT _tributary_id, name FROM _tributary_keys_tags ORDER BY 1;").stdout == "1|crimson\n2|blue\n3|green\n")

        let stream = scratch.path("kv-stream")
        #expect(try CLI.run(["export", db, "--to", stream, "--snapshot"]).status == 0)
        let verified = try CLI.run(["verify", stream])
        #expect(verified.status == 0 && verified.stdout.contains("snapshot"), "\(verified.stdout) \(verified.stderr)")
        let refused = try CLI.run(["replay", stream, "--into", scratch.path("kv-new.db")])
        #expect(refused.status != 0 && refused.stderrLines.count == 1 && refused.stderr.contains("nor make a store with it")
                && refused.stderr.contains("tributary adopt"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("kv-new.db")), "a refused replay leaves no file")
        let replica = scratch.path("kv-replica.db")
        #expect(try CLI.sqlite3(replica, schema).status == 0)
        #expect(try CLI.run(["adopt", replica]).status == 0)
        let replayed = try CLI.run(["replay", stream, "--into", replica])
        #expect(replayed.status == 0, "\(replayed.stderr)")
        let numbered = "SELECT m._tributary_id, t.name, t.color FROM tags t JOIN _tributary_keys_tags m USING (name) ORDER BY 1;"
        #expect(try CLI.sqlite3(replica, numbered).stdout == CLI.sqlite3(db, numbered).stdout, "the same rows under the same numbers")

        #expect(try CLI.run(["delete", db, "--entity", "tags", "--where", "name == 'green'"]).status == 0)
        #expect(try CLI.run(["adopt", db, "--undo"]).status == 0)
        let after = try CLI.sqlite3(db, ".dump").stdout
        #expect(after == before.replacingOccurrences(of: "'red','#f00'", with: "'blue','#00f');\nINSERT INTO tags VALUES('crimson','#e00'"), "\(after)")
    }

    @Test func badInputsGetOneLine() throws {
        let db = try makeApp()
        #expect(try CLI.sqlite3(db, "CREATE TABLE kv (k TEXT PRIMARY KEY, _pk);").status == 0)
        let refused = try CLI.run(["adopt", db])
        #expect(refused.status != 0 && refused.stderrLines.count == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains("'kv' has column '_pk'") && refused.stderr.contains("--exclude kv"), "\(refused.stderr)")
        #expect(try CLI.sqlite3(db, "SELECT count(*) FROM sqlite_master WHERE name LIKE '%tributary%';").stdout == "0\n", "a refused adoption writes nothing")
        #expect(try CLI.run(["adopt", db, "--exclude", "kv"]).status == 0)

        let notADatabase = scratch.path("notes.txt")
        try Data("hello\n".utf8 + Data(repeating: 0x41, count: 200)).write(to: URL(fileURLWithPath: notADatabase))
        for (arguments, message) in [
            (["adopt", scratch.path("missing.db")], "no database at this path"),
            (["adopt", notADatabase], "not a SQLite database; give the path of a SQLite database: a store made by tributary init, or a database to adopt"),
            (["adopt", db, "--undo", "--include", "users"], "--undo takes no --include or --exclude"),
        ] {
            let result = try CLI.run(arguments)
            #expect(result.status != 0 && result.stderrLines.count == 1 && result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
    }

    /// A foreign key to `users.id` is a to-one relationship through every command: the shell's
    /// update of it shows in history as a change of owner, `query` filters through it, every
    /// stream format carries it, the stream replays, and `--undo` still gives back the dump.
    @Test func aForeignKeyIsARelationshipThroughEveryCommand() throws {
        let db = try makeApp()
        #expect(try CLI.sqlite3(db, """
            CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, owner_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE);
            INSERT INTO notes (body, owner_id) VALUES ('hello', 1);
            """).status == 0)
        let before = try CLI.sqlite3(db, ".dump").stdout
        let adopted = try CLI.run(["adopt", db])
        #expect(adopted.stdout.contains("  notes: key id, 1 attribute, 1 relationship") && adopted.stdout.contains("  users: key id, 2 attributes, 1 relationship"), "\(adopted.stdout)")
        #expect(adopted.stdout.contains("note: owner_id → users is a to-one relationship; its inverse is users.notes, delete rule cascade (ON DELETE CASCADE)"), "\(adopted.stdout)")
        #expect(try CLI.sqlite3(db, "UPDATE notes SET owner_id = 2;").status == 0)
        let history = try CLI.run(["history", db])
        #expect(history.status == 0 && history.stdout.contains("owner_id: users/p1  →  users/p2"), "\(history.stdout) \(history.stderr)")
        let owned = try CLI.run(["query", db, "--entity", "notes", "--where", "owner_id.name == 'Bob'", "--json"])
        #expect(owned.status == 0 && owned.stdout.contains("hello"), "\(owned.stdout) \(owned.stderr)")
        for format in ["native", "cloudevents", "debezium"] {
            let export = try CLI.run(["export", db, "--to", "-", "--format", format])
            #expect(export.status == 0 && export.stdoutLines.contains { $0.contains("owner_id") }, "\(format): \(export.stdout) \(export.stderr)")
        }
        let replica = try CLI.exportVerifyReplay(db, in: scratch)
        let copied = try CLI.run(["query", replica, "--entity", "notes", "--where", "owner_id.email == 'bob@example.com'", "--json"])
        #expect(copied.status == 0 && copied.stdout.contains("hello"), "\(copied.stdout) \(copied.stderr)")
        let deleted = try CLI.run(["delete", db, "--entity", "users", "--where", "name == 'Bob'"])
        let remaining = try CLI.sqlite3(db, "SELECT count(*) FROM notes;").stdout
        #expect(deleted.status == 0 && remaining == "0\n", "cascade: \(deleted.stderr)")
        #expect(try CLI.run(["adopt", db, "--undo"]).status == 0)
        let after = try CLI.sqlite3(db, ".dump").stdout
        #expect(after == before.replacingOccurrences(of: "INSERT INTO notes VALUES(1,'hello',1);\n", with: "").replacingOccurrences(of: "INSERT INTO users VALUES(2,'bob@example.com','Bob');\n", with: ""),
                "\(after)")
    }
}

