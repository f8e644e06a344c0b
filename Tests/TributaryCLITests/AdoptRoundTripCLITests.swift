import Foundation
import Testing
import TributaryTestSupport

/// Adopted databases another program wrote, through export and replay (and restore): the
/// replica holds what the source held, value for value and class for class. Each test is a
/// defect a hostile probe found (issue 22).
@Suite struct AdoptRoundTripCLITests {
    let scratch = Scratch()

    /// Replay applies another program's delete as it happened: with SQLite's foreign keys off
    /// (the default) the children of a deleted row keep their rows and links, whatever the
    /// declared `ON DELETE`. Found by a hostile probe: replay applied the adopted model's rules,
    /// so a cascade deleted the replica's children and a set-null cleared their links (exit 0),
    /// and a restrict stopped replay with "the rule is deny".
    @Test func replayDeletesOnlyWhatTheSourceDeleted() throws {
        let pair = try AdoptedPair(scratch, "fk", schema: """
            CREATE TABLE p (id INTEGER PRIMARY KEY, name TEXT);
            CREATE TABLE c (id INTEGER PRIMARY KEY, pid INTEGER REFERENCES p(id) ON DELETE CASCADE);
            CREATE TABLE d (id INTEGER PRIMARY KEY, pid INTEGER REFERENCES p(id) ON DELETE SET NULL);
            CREATE TABLE e (id INTEGER PRIMARY KEY, pid INTEGER REFERENCES p(id));
            """)
        #expect(try CLI.sqlite3(pair.source, """
            INSERT INTO p VALUES (1, 'one'), (2, 'two'); INSERT INTO c VALUES (10, 1); INSERT INTO d VALUES (20, 1); INSERT INTO e VALUES (30, 1);
            DELETE FROM p WHERE id = 1;
            """).status == 0)
        try pair.replay()
        let (source, replica) = try pair.rows("SELECT 'p', id, quote(name) FROM p UNION ALL SELECT 'c', id, quote(pid) FROM c UNION ALL SELECT 'd', id, quote(pid) FROM d UNION ALL SELECT 'e', id, quote(pid) FROM e;")
        #expect(source == "p|2|'two'\nc|10|1\nd|20|1\ne|30|1\n", "\(source)")
        #expect(replica == source)
    }

    /// A negative zero another program stored where no affinity changes it (an untyped,
    /// `BLOB` or `STRICT` `ANY` column) keeps its sign through JSON, export and replay. Found by
    /// a hostile probe: JSON wrote `0.0`, and the replica held 0.0 (exit 0).
    @Test func aNegativeZeroKeepsItsSign() throws {
        let pair = try AdoptedPair(scratch, "negzero", schema: "CREATE TABLE t (id INTEGER PRIMARY KEY, u, b BLOB); CREATE TABLE s (id INTEGER PRIMARY KEY, a ANY) STRICT;")
        // The shell reads the literal -0.0 as 0.0: Python's sqlite3 module binds the double.
        let written = try CLI.python(pair.source, """
            c.execute('INSERT INTO t VALUES (1, ?, ?), (2, 0.0, 0.0)', (-0.0, -0.0))
            c.execute('INSERT INTO s VALUES (1, ?)', (-0.0,))
            c.commit()
            """)
        #expect(written.status == 0, "\(written.stderr)")
        let history = try CLI.run(["history", pair.source, "--json"]).stdout
        #expect(history.contains(#""after":{"u":-0.0,"b":-0.0}"#) && history.contains(#""after":{"u":0.0,"b":0.0}"#), "\(history)")
        try pair.replay()
        let rows = "print(c.execute('SELECT id, u, b FROM t UNION ALL SELECT id, a, typeof(a) FROM s').fetchall())"
        let expected = try CLI.python(pair.source, rows).stdout
        #expect(expected == "[(1, -0.0, -0.0), (2, 0.0, 0.0), (1, -0.0, 'real')]\n", "\(expected)")
        #expect(try CLI.python(pair.replica, rows).stdout == expected)
    }

    /// The integers of a `NUMERIC` column come back as integers, -2^63 included: a double holds
    /// it exactly, but SQLite does not make that real the integer again. Found by a hostile
    /// probe: it was read as -9.223372036854776e+18 and the replica held a real (exit 0).
    @Test func theSmallestIntegerStaysAnInteger() throws {
        let pair = try AdoptedPair(scratch, "int-min", schema: "CREATE TABLE t (id INTEGER PRIMARY KEY, n NUMERIC, d DECIMAL(20, 0));")
        #expect(try CLI.sqlite3(pair.source, """
            INSERT INTO t VALUES (1, -9223372036854775808, -9223372036854775808), (2, 9223372036854775807, 4611686018427387904), (3, 2.5, 7);
            """).status == 0)
        try pair.replay()
        let (source, replica) = try pair.rows("SELECT id, quote(n), typeof(n), quote(d), typeof(d) FROM t ORDER BY id;")
        #expect(source.hasPrefix("1|-9223372036854775808|integer|-9223372036854775808|integer\n"), "\(source)")
        #expect(replica == source)
    }

    /// A table of keys alone (or keys and generated columns) replays from history and from a
    /// snapshot. Found by a hostile probe: replay asked for "2 primary keys for 0 objects",
    /// its rows of no column taken for no rows.
    @Test(arguments: [false, true])
    func aTableOfKeysAloneReplays(snapshot: Bool) throws {
        let pair = try AdoptedPair(scratch, "keys-\(snapshot)", schema: "CREATE TABLE p (id INTEGER PRIMARY KEY); CREATE TABLE g (id INTEGER PRIMARY KEY, twice INTEGER GENERATED ALWAYS AS (id * 2));")
        #expect(try CLI.sqlite3(pair.source, "INSERT INTO p VALUES (1), (2), (5); INSERT INTO g (id) VALUES (3), (4); DELETE FROM p WHERE id = 2;").status == 0)
        try pair.replay(exportArguments: snapshot ? ["--snapshot"] : [])
        let (source, replica) = try pair.rows("SELECT 'p', id FROM p UNION ALL SELECT 'g', twice FROM g;")
        #expect(source == "p|1\np|5\ng|6\ng|8\n", "\(source)")
        #expect(replica == source)
    }

    /// A `STRICT` table's `ANY` column keeps every value as given, as an untyped column does,
    /// and is adopted as one: integers stay integers through history, export and replay. Found
    /// by a hostile probe: adopted as a double attribute (ANY is of NUMERIC affinity outside
    /// `STRICT` tables), its 42 was recorded and replayed as 42.0 (exit 0).
    @Test func aStrictTablesAnyColumnKeepsItsValuesAsGiven() throws {
        let pair = try AdoptedPair(scratch, "strict-any", schema: "CREATE TABLE t (id INTEGER PRIMARY KEY, a ANY, n INTEGER) STRICT;")
        #expect(try CLI.sqlite3(pair.source, "INSERT INTO t VALUES (1, 42, 1), (2, 1.0, 2), (3, 'text', 3), (4, x'01', 4); UPDATE t SET a = 1 WHERE id = 2;").status == 0)
        #expect(try CLI.run(["history", pair.source, "--json"]).stdout.contains(#""a":{"before":1.0,"after":1}"#))
        try pair.replay()
        let (source, replica) = try pair.rows("SELECT id, quote(a), typeof(a) FROM t ORDER BY id;")
        #expect(source == "1|42|integer\n2|1|integer\n3|'text'|text\n4|X'01'|blob\n", "\(source)")
        #expect(replica == source)
    }

    /// `restore` puts back what the store held, values of another class than their attribute's
    /// included (5 or a blob in an untyped column, which adoption makes a string attribute;
    /// seconds or a word in a `DATETIME` one). Found by a hostile probe: it refused them,
    /// "'a' of t is a string, and integer 5 is not; give a string", for a value no one typed.
    @Test func restorePutsBackValuesOfAnotherClassAsTheyWere() throws {
        let db = scratch.path("restore-as-given.db")
        #expect(try CLI.sqlite3(db, "CREATE TABLE t (id INTEGER PRIMARY KEY, a, d DATETIME); INSERT INTO t VALUES (1, 5, 1e12), (2, x'cafe', 'soon'), (3, 'x', 7);").status == 0)
        #expect(try CLI.run(["adopt", db]).status == 0)
        #expect(try CLI.sqlite3(db, "UPDATE t SET a = 'five', d = '2024-01-01T00:00:00Z' WHERE id = 1; INSERT INTO t VALUES (4, 4, 4);").status == 0)
        let point = try CLI.run(["token", db]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let rows = "SELECT id, quote(a), typeof(a), quote(d), typeof(d) FROM t ORDER BY id;"
        let atPoint = try CLI.sqlite3(db, rows).stdout
        #expect(try CLI.sqlite3(db, "UPDATE t SET a = 'later', d = 'later'; DELETE FROM t WHERE id = 4;").status == 0)
        let restored = try CLI.run(["restore", db, "--entity", "t", "--to", point])
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(try CLI.sqlite3(db, rows).stdout == atPoint, "\(atPoint)")
    }
}
