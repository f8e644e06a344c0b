import Foundation
import Testing

/// `tributary audit verify` against history edited with the `sqlite3` shell: each edit is
/// caught, with the token of the first transaction concerned (issue 24).
@Suite struct AuditCLITests {
    let scratch = Scratch()

    /// A blog store with five transactions: imports by ann (1, 2, 4, 5, the last with a
    /// reason) and bob (3).
    func makeStore() throws -> String {
        let db = try CLI.makeBlogStore(at: scratch.path("blog-\(UUID().uuidString).sqlite"))
        for (i, author) in ["ann", "ann", "bob", "ann", "ann"].enumerated() {
            var arguments = ["import", db, "--entity", "Post", "--author", author]
            if i == 4 { arguments += ["--reason", "ticket 42: backfill"] }
            let imported = try CLI.run(arguments, stdin: CLI.posts(i * 2..<i * 2 + 2))
            #expect(imported.status == 0, "\(imported.stderr)")
        }
        return db
    }

    /// Runs `sql` on the store with the shell, then `audit verify`: it must fail naming `token`.
    func expectCaught(_ sql: String, at token: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let db = try makeStore()
        let intact = try CLI.run(["audit", "verify", db])
        #expect(intact.status == 0 && intact.stdout.hasPrefix("ok: 5 transactions (10 changes), tokens 1…5, chain head "), "\(intact.stdout)\(intact.stderr)",
                sourceLocation: sourceLocation)
        let edited = try CLI.sqlite3(db, sql)
        #expect(edited.status == 0, "\(edited.stderr)", sourceLocation: sourceLocation)
        let verified = try CLI.run(["audit", "verify", db])
        #expect(verified.status != 0 && verified.stderrLines.count == 1, "\(verified.stdout)\(verified.stderr)", sourceLocation: sourceLocation)
        #expect(verified.stderr.contains("the history was edited: token \(token):"), "\(verified.stderr)", sourceLocation: sourceLocation)
    }

    @Test func anEditedPayloadIsCaught() throws {
        try expectCaught("UPDATE _tributary_history SET payload = payload || x'00' WHERE token = 3;", at: 3)
    }

    @Test func anEditedAuthorIsCaughtAtItsFirstTransaction() throws {
        try expectCaught("UPDATE _tributary_history_source SET author = 'mallory' WHERE author = 'bob';", at: 3)
    }

    @Test func anEditedReasonTimeOrCountIsCaught() throws {
        try expectCaught("UPDATE _tributary_history SET reason = 'routine' WHERE token = 5;", at: 5)
        try expectCaught("UPDATE _tributary_history SET timestamp = timestamp - 86400 WHERE token = 2;", at: 2)
        try expectCaught("UPDATE _tributary_history SET changeCount = 1 WHERE token = 4;", at: 4)
    }

    @Test func anEditedTokenIsCaughtWhereItWent() throws {
        try expectCaught("UPDATE _tributary_history SET token = 9 WHERE token = 5;", at: 5)
        try expectCaught("UPDATE _tributary_history SET token = 20 WHERE token = 2;", at: 2)
    }

    @Test func aDeletedTransactionIsCaught() throws {
        try expectCaught("DELETE FROM _tributary_history WHERE token = 2;", at: 2)
    }

    @Test func anInsertedTransactionIsCaught() throws {
        // A copy of transaction 5 appended as 6, hash and all.
        try expectCaught("""
            INSERT INTO _tributary_history (token, timestamp, sourceID, changeCount, entities, payload, reason, hash)
                SELECT 6, timestamp + 1, sourceID, changeCount, entities, payload, reason, hash FROM _tributary_history WHERE token = 5;
            """, at: 6)
    }

    @Test func swappedTransactionsAreCaught() throws {
        try expectCaught("""
            BEGIN;
            UPDATE _tributary_history SET token = 100 WHERE token = 2;
            UPDATE _tributary_history SET token = 2 WHERE token = 3;
            UPDATE _tributary_history SET token = 3 WHERE token = 100;
            COMMIT;
            """, at: 2)
    }

    @Test func aRemovedHashOrAnchorIsCaught() throws {
        try expectCaught("UPDATE _tributary_history SET hash = NULL WHERE token = 4;", at: 4)
        try expectCaught("DELETE FROM _tributary_metadata WHERE key = 'historyChainAnchor';", at: 1)
    }

    @Test func pruningKeepsTheChainVerifiableAndIsLogged() throws {
        let db = try makeStore()
        let current = try CLI.run(["token", db]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let pruned = try CLI.run(["prune", db, "--before", "2" + current.drop { $0 != "-" }])
        #expect(pruned.status == 0, "\(pruned.stderr)")
        let verified = try CLI.run(["audit", "verify", db, "--json"])
        #expect(verified.status == 0, "\(verified.stderr)")
        let report = try CLI.json(verified.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(report["transactions"] as? Int == 3 && report["oldestToken"] as? Int == 3 && report["headToken"] as? Int == 5, "\(report)")
        #expect((report["headHash"] as? String)?.count == 64)
        let log = try CLI.sqlite3(db, "SELECT through, transactions, changes, length(anchor) FROM _tributary_history_prune;")
        #expect(log.stdout == "2|2|4|32\n", "\(log.stdout)")
        // Deleting the oldest kept transaction after the prune is still caught.
        #expect(try CLI.sqlite3(db, "DELETE FROM _tributary_history WHERE token = 3;").status == 0)
        let edited = try CLI.run(["audit", "verify", db])
        #expect(edited.status != 0 && edited.stderr.contains("token 3: transaction 3 is missing"), "\(edited.stderr)")
    }

    @Test func theReasonShowsInHistory() throws {
        let db = try makeStore()
        let history = try CLI.run(["history", db, "--json"])
        let lines = history.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 5, "\(history.stdout)")
        #expect(try CLI.json(lines[4])["reason"] as? String == "ticket 42: backfill")
        #expect(try CLI.json(lines[0])["reason"] is NSNull)
        let text = try CLI.run(["history", db])
        #expect(text.stdout.contains("reason=ticket 42: backfill"), "\(text.stdout)")
        // An empty reason is none.
        #expect(try CLI.run(["import", db, "--entity", "Post", "--reason", ""], stdin: CLI.posts(40..<41)).status == 0)
        let last = try CLI.run(["history", db, "--reverse", "--limit", "1", "--json"])
        #expect(try CLI.json(last.stdout.trimmingCharacters(in: .whitespacesAndNewlines))["reason"] is NSNull, "\(last.stdout)")
    }

    /// A store exported to a stream, then edited with the shell as `sql`; returns the store and the stream.
    func exported(thenEdited sql: String?) throws -> (db: String, stream: String) {
        let db = try makeStore()
        let stream = scratch.path("stream-\(UUID().uuidString)")
        let export = try CLI.run(["export", db, "--to", stream])
        #expect(export.status == 0, "\(export.stderr)")
        if let sql { #expect(try CLI.sqlite3(db, sql).status == 0) }
        return (db, stream)
    }

    @Test func aStoreMatchesTheStreamItWasExportedTo() throws {
        let (db, stream) = try exported(thenEdited: nil)
        let manifest = try String(contentsOfFile: stream + "/manifest.json", encoding: .utf8)
        #expect(manifest.contains(#""chain""#) && manifest.contains(#""token" : 5"#), "\(manifest)")
        let verified = try CLI.run(["audit", "verify", db, "--against", stream])
        #expect(verified.status == 0 && verified.stdout.contains("and the stream \(stream) at token 5"), "\(verified.stdout)\(verified.stderr)")
        // Later transactions do not matter: the stream vouches for history through its own.
        #expect(try CLI.run(["import", db, "--entity", "Post"], stdin: CLI.posts(50..<51)).status == 0)
        #expect(try CLI.run(["audit", "verify", db, "--against", stream]).status == 0)
    }

    @Test func droppedNewestTransactionsAreCaughtAgainstTheStream() throws {
        let (db, stream) = try exported(thenEdited: "DELETE FROM _tributary_history WHERE token >= 4;")
        #expect(try CLI.run(["audit", "verify", db]).status == 0, "the chain left holds by itself")
        let verified = try CLI.run(["audit", "verify", db, "--against", stream])
        #expect(verified.status != 0 && verified.stderr.contains("token 5, which the stream \(stream) holds, is missing"), "\(verified.stderr)")
    }

    @Test func historyRewrittenWithEveryHashRecomputedIsCaughtAgainstTheStream() throws {
        // The author edited, then every hash recomputed: opening a store whose history format
        // says 2 chains all of it again, as someone covering an edit would.
        let (db, stream) = try exported(thenEdited: """
            UPDATE _tributary_history_source SET author = 'mallory' WHERE author = 'bob';
            UPDATE _tributary_metadata SET value = '2' WHERE key = 'historyFormat';
            """)
        #expect(try CLI.run(["audit", "verify", db]).status == 0, "the recomputed chain holds by itself")
        let verified = try CLI.run(["audit", "verify", db, "--against", stream])
        #expect(verified.status != 0 && verified.stderr.contains("through token 5 it differs from the stream"), "\(verified.stderr)")
    }

    @Test func aSignedCheckpointVouchesForTheHistoryThroughIt() throws {
        let db = try makeStore()
        let key = scratch.path("audit-\(UUID().uuidString).key")
        let made = try CLI.run(["audit", "key", key])
        #expect(made.status == 0 && made.stdout.hasPrefix("public key "), "\(made.stdout)\(made.stderr)")
        let publicKey = String(made.stdout.dropFirst("public key ".count)).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect((try FileManager.default.attributesOfItem(atPath: key)[.posixPermissions] as? Int) == 0o600)
        let again = try CLI.run(["audit", "key", key])
        #expect(again.status != 0 && again.stderr.contains("the file exists"), "a key is never overwritten: \(again.stderr)")

        let checkpoint = scratch.path("checkpoint-\(UUID().uuidString).json")
        let signed = try CLI.run(["audit", "checkpoint", db, "--key", key, "--out", checkpoint])
        #expect(signed.status == 0 && signed.stdout.contains("checkpoint of token 5"), "\(signed.stdout)\(signed.stderr)")
        let verified = try CLI.run(["audit", "verify", db, "--checkpoint", checkpoint, "--trusted-key", publicKey])
        #expect(verified.status == 0 && verified.stdout.contains("and the signed checkpoint at token 5"), "\(verified.stdout)\(verified.stderr)")

        let other = String(try CLI.run(["audit", "key", scratch.path("other-\(UUID().uuidString).key")]).stdout.dropFirst("public key ".count))
        let untrusted = try CLI.run(["audit", "verify", db, "--checkpoint", checkpoint, "--trusted-key", other.trimmingCharacters(in: .whitespacesAndNewlines)])
        #expect(untrusted.status != 0 && untrusted.stderr.contains("for the trusted key"), "\(untrusted.stderr)")
        let text = try String(contentsOfFile: checkpoint, encoding: .utf8)
        let forged = scratch.path("forged-\(UUID().uuidString).json")
        try text.replacingOccurrences(of: #""token":5"#, with: #""token":4"#).write(toFile: forged, atomically: true, encoding: .utf8)
        let edited = try CLI.run(["audit", "verify", db, "--checkpoint", forged])
        #expect(edited.status != 0 && edited.stderr.contains("signature does not hold"), "\(edited.stderr)")

        // The author edited and every hash recomputed: the chain holds by itself, not against the checkpoint.
        #expect(try CLI.sqlite3(db, """
            UPDATE _tributary_history_source SET author = 'mallory' WHERE author = 'bob';
            UPDATE _tributary_metadata SET value = '2' WHERE key = 'historyFormat';
            """).status == 0)
        #expect(try CLI.run(["audit", "verify", db]).status == 0)
        let rewritten = try CLI.run(["audit", "verify", db, "--checkpoint", checkpoint])
        #expect(rewritten.status != 0 && rewritten.stderr.contains("through token 5 it differs from the checkpoint"), "\(rewritten.stderr)")
    }
}
