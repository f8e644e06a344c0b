import Foundation
import Testing

/// A database another program made with names that are not plain words (spaces, hyphens,
/// SQL keywords, a double quote, a leading `_`, letters beyond ASCII): adopted as it is,
/// its writes recorded under those names, queried with backticked key paths, streamed,
/// replayed, and undone to the byte of its dump.
@Suite struct QuotedNameCLITests {
    let scratch = Scratch()

    static let schema = #"""
        CREATE TABLE "Order Details" ("order id" INTEGER PRIMARY KEY, "unit-price" REAL, "select" TEXT, "Größe" TEXT, "_note" TEXT, "say ""hi""" TEXT);
        CREATE UNIQUE INDEX "by select" ON "Order Details" ("select");
        INSERT INTO "Order Details" VALUES (1, 2.5, 'a', 'L', 'first', 'x'), (2, 9.0, 'b', 'M', NULL, NULL);
        """#

    /// The shop's database, adopted, and its dump before.
    func adopted() throws -> (db: String, dump: String) {
        let db = scratch.path("shop.db")
        #expect(try CLI.sqlite3(db, Self.schema).status == 0)
        let dump = try CLI.sqlite3(db, ".dump").stdout
        let adopted = try CLI.run(["adopt", db])
        #expect(adopted.status == 0, "\(adopted.stderr)")
        return (db, dump)
    }

    @Test func foreignWritesAreRecordedUnderTheNamesTheTableHas() throws {
        let db = try adopted().db
        #expect(try CLI.sqlite3(db, """
            BEGIN;
            UPDATE "Order Details" SET "unit-price" = 3.0, "_note" = 'second' WHERE "order id" = 1;
            INSERT OR REPLACE INTO "Order Details" ("order id", "unit-price", "select") VALUES (7, 1.0, 'b');
            COMMIT;
            """).status == 0)
        let json = try CLI.run(["history", db, "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let changes = try json.stdoutLines.flatMap { try CLI.json($0)["changes"] as? [[String: Any]] ?? [] }
        let lines = changes.map { "\($0["type"] as? String ?? "?") \($0["object"] as? String ?? $0["entity"] as? String ?? "?")" }
        #expect(changes.count == 3, "an update, the row REPLACE removed through \"by select\", the insert: \(lines)")
        let update = try #require(changes.first { $0["type"] as? String == "update" })
        #expect("\(update)".contains("unit-price") && "\(update)".contains("_note") && "\(update)".contains("second"), "\(update)")
        #expect(changes.contains { $0["type"] as? String == "delete" && "\($0)".contains("Order Details") }, "\(lines)")
        let text = try CLI.run(["history", db])
        #expect(text.stdout.contains("update Order Details/p1"), "\(text.stdout)")
    }

    @Test func queriesTakeBacktickedNames() throws {
        let db = try adopted().db
        let rows = try CLI.run(["query", db, "--entity", "Order Details", "--where", "`unit-price` > 3 AND `select` == 'b'", "--json"])
        #expect(rows.status == 0, "\(rows.stderr)")
        #expect(rows.stdoutLines.count == 1 && rows.stdout.contains(#""Größe":"M""#), "\(rows.stdout)")
        let sorted = try CLI.run(["query", db, "--entity", "Order Details", "--sort", "`unit-price`:desc", "--json"])
        #expect(sorted.status == 0, "\(sorted.stderr)")
        #expect(sorted.stdoutLines.first?.contains(#""select":"b""#) == true, "\(sorted.stdout)")
        let unterminated = try CLI.run(["query", db, "--entity", "Order Details", "--where", "`unit-price > 3"])
        #expect(unterminated.status != 0 && unterminated.stderr.contains("unterminated quoted name"), "\(unterminated.stderr)")
    }

    @Test func theStreamReplaysAndUndoLeavesTheDump() throws {
        let (db, before) = try adopted()
        #expect(try CLI.sqlite3(db, #"UPDATE "Order Details" SET "say ""hi""" = 'hello' WHERE "order id" = 2; DELETE FROM "Order Details" WHERE "order id" = 1;"#).status == 0)
        let replica = try CLI.exportVerifyReplay(db, in: scratch)
        let rows = try CLI.run(["query", replica, "--entity", "Order Details", "--json"])
        #expect(rows.stdoutLines.count == 1 && rows.stdout.contains(#""say \"hi\"":"hello""#), "\(rows.stdout)")
        #expect(try CLI.sqlite3(db, #"UPDATE "Order Details" SET "say ""hi""" = NULL WHERE "order id" = 2; INSERT INTO "Order Details" VALUES (1, 2.5, 'a', 'L', 'first', 'x');"#).status == 0)
        let undone = try CLI.run(["adopt", "--undo", db])
        #expect(undone.status == 0, "\(undone.stderr)")
        #expect(try CLI.sqlite3(db, ".dump").stdout == before)
    }

    @Test func aNameThatCannotBeCarriedIsRefusedWithTheExcludeThatLeavesItOut() throws {
        let db = scratch.path("odd.db")
        #expect(try CLI.sqlite3(db, #"CREATE TABLE "a.b" (id INTEGER PRIMARY KEY); CREATE TABLE t (id INTEGER PRIMARY KEY, "_pk" TEXT);"#).status == 0)
        let refused = try CLI.run(["adopt", db])
        #expect(refused.status != 0, "\(refused.stdout)")
        #expect(refused.stderr.contains("'a.b' has a name holding . / `") && refused.stderr.contains("'t' has column '_pk', which has a name Tributary uses"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--exclude 'a.b' --exclude t"), "\(refused.stderr)")
    }
}
