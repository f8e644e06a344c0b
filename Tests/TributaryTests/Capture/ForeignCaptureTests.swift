import Foundation
import Testing
@testable import Tributary
import TributaryTestSupport

/// Writes by programs that do not use Tributary (the `sqlite3` shell, Python) appear in
/// history: one history transaction per SQL transaction, with before and after values,
/// in commit order with Tributary's own.
@Suite struct ForeignCaptureTests {
    let dir = TemporaryDirectory()
    var path: URL { dir.file("blog.sqlite") }

    func open() throws -> PersistentStoreCoordinator {
        let description = PersistentStoreDescription(url: path)
        description.persistentHistoryTracking = true
        return try Fixtures.blogCoordinator(description)
    }

    func history(_ coordinator: PersistentStoreCoordinator, after token: PersistentHistoryToken?) throws -> [PersistentHistoryTransaction] {
        try coordinator.fetchHistory(.fetchHistory(after: token))
    }

    func change(_ transaction: PersistentHistoryTransaction, _ entity: String, _ type: PersistentHistoryChangeType) -> PersistentHistoryChange? {
        transaction.changes.first { $0.entityName == entity && $0.changeType == type }
    }

    func value(_ change: PersistentHistoryChange?, _ name: String) -> (before: AttributeValue?, after: AttributeValue?)? {
        change?.properties.first { $0.name == name }.map { ($0.before, $0.after) }
    }

    @Test func aShellTransactionIsOneHistoryTransactionWithItsValues() throws {
        let coordinator = try open()
        try Fixtures.seedBlog(coordinator, posts: 2)
        let start = try coordinator.currentPersistentHistoryToken()
        try ForeignWriter.shell(path, """
            BEGIN;
            INSERT INTO Tag (name) VALUES ('rust');
            UPDATE Tag SET color = 'red' WHERE name = 'rust';
            UPDATE Tag SET color = NULL WHERE name = 'swift';
            DELETE FROM Post WHERE externalID = 'ext-1';
            COMMIT;
            """)
        let transactions = try history(coordinator, after: start)
        #expect(transactions.count == 1)
        let transaction = try #require(transactions.first)
        #expect(transaction.author == nil && transaction.contextName == nil)
        #expect(transaction.processName == "foreign" && transaction.processID == -1)
        let inserted = change(transaction, "Tag", .insert)
        #expect(value(inserted, "name")?.after == .string("rust"))
        #expect(value(inserted, "color")?.after == .string("red"), "an insert carries the values at commit")
        let updated = change(transaction, "Tag", .update)
        #expect(value(updated, "color")?.before == .string("gray"))
        #expect(value(updated, "color")?.after == .null, "a value to NULL counts")
        #expect(updated?.properties.map(\.name) == ["color"], "only the changed column: \(String(describing: updated?.properties.map(\.name)))")
        let deleted = change(transaction, "Post", .delete)
        #expect(value(deleted, "title")?.before == .string("Post 1"), "a delete keeps a tombstone")
    }

    @Test func shellStatementsOutsideATransactionAreOneTransactionEach() throws {
        let coordinator = try open()
        let start = try coordinator.currentPersistentHistoryToken()
        try ForeignWriter.shell(path, """
            INSERT INTO Tag (name) VALUES ('a');
            INSERT INTO Tag (name) VALUES ('b');
            UPDATE Tag SET color = 'blue';
            """)
        let transactions = try history(coordinator, after: start)
        #expect(transactions.map(\.changes.count) == [1, 1, 2])
        #expect(transactions.map { $0.changes.first?.changeType } == [.insert, .insert, .update])
    }

    @Test func pythonCommitsAreTransactionsAndRollbacksLeaveNothing() throws {
        let coordinator = try open()
        let start = try coordinator.currentPersistentHistoryToken()
        try ForeignWriter.python(path, """
            db.executemany("INSERT INTO Tag (name) VALUES (?)", [("t%d" % i,) for i in range(50)])
            db.commit()
            db.execute("INSERT INTO Tag (name) VALUES ('gone')")
            db.rollback()
            db.execute("UPDATE Tag SET color = 'x' WHERE name < 't2'")
            db.commit()
            """)
        let transactions = try history(coordinator, after: start)
        #expect(transactions.map(\.changes.count) == [50, 12])
        #expect(!transactions.flatMap(\.changes).contains { value($0, "name")?.after == .string("gone") })
    }

    @Test func tributaryWritesAreRecordedOnceAndLogNothing() throws {
        let coordinator = try open()
        try Fixtures.seedBlog(coordinator, posts: 5)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let tag = try context.fetch(FetchRequest(entityName: "Tag")).first!
            try tag.setValue(.string("green"), forKey: "color")
            try context.save()
        }
        let db = coordinator.persistentStores[0].database
        #expect(try db.read { try $0.scalar("SELECT count(*) FROM _tributary_capture_log WHERE t != 0")?.integerValue } == 0)
        let all = try history(coordinator, after: nil)
        #expect(all.count == 3)
        #expect(all.allSatisfy { $0.processID != -1 })
    }

    @Test func tokensFollowCommitOrderAcrossWriters() throws {
        let coordinator = try open()
        let start = try coordinator.currentPersistentHistoryToken()
        for i in 0..<4 {
            try ForeignWriter.shell(path, "INSERT INTO Tag (name) VALUES ('shell\(i)');")
            var request = BatchInsertRequest(entityName: "Tag", objects: [["name": .string("own\(i)")]])
            request.resultType = .count
            try coordinator.execute(request)
        }
        let names = try history(coordinator, after: start).map { value($0.changes.first, "name")?.after }
        #expect(names == (0..<4).flatMap { [AttributeValue.string("shell\($0)"), .string("own\($0)")] })
    }

    @Test func replaceUpsertAndIgnoreAreRecordedAsWhatHappened() throws {
        let coordinator = try open()
        try Fixtures.seedBlog(coordinator, posts: 0)
        var start = try coordinator.currentPersistentHistoryToken()
        // REPLACE on the unique name: the old row goes (no DELETE trigger fires for it) and a new one comes.
        try ForeignWriter.shell(path, "INSERT OR REPLACE INTO Tag (_pk, name, color) VALUES (100, 'swift', 'orange');")
        var transaction = try #require(try history(coordinator, after: start).first)
        #expect(value(change(transaction, "Tag", .delete), "name")?.before == .string("swift"))
        #expect(value(change(transaction, "Tag", .insert), "color")?.after == .string("orange"))
        start = transaction.token
        // An upsert's update branch is an update; INSERT OR IGNORE of a conflict is nothing.
        try ForeignWriter.shell(path, """
            INSERT INTO Tag (name, color) VALUES ('swift', 'black') ON CONFLICT(name) DO UPDATE SET color = excluded.color;
            INSERT OR IGNORE INTO Tag (name) VALUES ('swift');
            """)
        let transactions = try history(coordinator, after: start)
        #expect(transactions.count == 1)
        transaction = try #require(transactions.first)
        #expect(transaction.changes.map(\.changeType) == [.update])
        #expect(value(transaction.changes.first, "color")?.before == .string("orange"))
        #expect(value(transaction.changes.first, "color")?.after == .string("black"))
    }

    @Test func aKeyChangeIsALinkedDeleteAndInsertAndEmptyValuesAndBlobsKeepTheirKind() throws {
        let coordinator = try open()
        try Fixtures.seedBlog(coordinator, posts: 1)
        let start = try coordinator.currentPersistentHistoryToken()
        try ForeignWriter.shell(path, """
            INSERT INTO ImageData (_pk, width, bytes) VALUES (7, 0, x'');
            UPDATE Tag SET _pk = 900, color = '' WHERE name = 'linux';
            """)
        let transactions = try history(coordinator, after: start)
        #expect(transactions.count == 2)
        let image = try #require(transactions.first?.changes.first)
        #expect(image.changedObjectID.primaryKey == 7)
        #expect(value(image, "width")?.after == .integer(0))
        #expect(image.properties.first { $0.name == "bytes" }?.isValueExcluded == true)
        let moved = try #require(transactions.last)
        #expect(Set(moved.changes.map(\.changeType)) == [.insert, .delete])
        #expect(change(moved, "Tag", .insert)?.changedObjectID.primaryKey == 900)
        #expect(value(change(moved, "Tag", .insert), "color")?.after == .string(""))
        #expect(value(change(moved, "Tag", .delete), "color")?.before == .string("gray"))
        #expect(change(moved, "Tag", .insert)?.movedFrom != nil && change(moved, "Tag", .insert)?.movedFrom == change(moved, "Tag", .delete)?.changedObjectID)
        #expect(change(moved, "Tag", .delete)?.movedTo?.primaryKey == 900)
    }

    @Test func linksWrittenThroughAJoinTableAreMembershipChangesOnBothSides() throws {
        let coordinator = try open()
        let (tags, posts) = try Fixtures.seedBlog(coordinator, posts: 2)
        let start = try coordinator.currentPersistentHistoryToken()
        try ForeignWriter.shell(path, "INSERT INTO _Post_tags (src, dst) VALUES (\(posts[1].primaryKey), \(tags[0].primaryKey));")
        let transaction = try #require(try history(coordinator, after: start).first)
        let post = transaction.changes.first(where: { $0.entityName == "Post" })
        #expect(post?.properties.first(where: { $0.name == "tags" })?.added.map(\.primaryKey) == [tags[0].primaryKey])
        let tag = transaction.changes.first(where: { change in change.entityName == "Tag" && change.properties.contains { $0.isMembershipChange } })
        #expect(tag?.properties.first(where: { $0.name == "posts" })?.added.map(\.primaryKey) == [posts[1].primaryKey])
        #expect(tag?.properties.contains { $0.name == "postCount" } == true, "the derived count the store's own trigger updated is part of it")
    }

    /// A store with one post linked (by another program) to its first `tags` tags of two.
    func postLinked(to tags: Int) throws -> (PersistentStoreCoordinator, post: Int64, tag0: Int64, tag1: Int64) {
        let coordinator = try open()
        let (seeded, posts) = try Fixtures.seedBlog(coordinator, posts: 1)
        let (post, tag0, tag1) = (posts[0].primaryKey, seeded[0].primaryKey, seeded[1].primaryKey)
        let pairs = [tag0, tag1].prefix(tags).map { "(\(post), \($0))" }.joined(separator: ", ")
        try ForeignWriter.shell(path, "DELETE FROM _Post_tags; INSERT INTO _Post_tags (src, dst) VALUES \(pairs);")
        return (coordinator, post, tag0, tag1)
    }

    /// The link changes in the history after `start`: each post's as `+[added keys] -[removed
    /// keys]`, each tag's as `added/removed` counts.
    func linkChanges(_ coordinator: PersistentStoreCoordinator, after start: PersistentHistoryToken) throws -> (posts: [String], tags: [String]) {
        let changes = try history(coordinator, after: start).flatMap(\.changes)
        let links = { (entity: String) in changes.filter { $0.entityName == entity }.flatMap(\.properties).filter(\.isMembershipChange) }
        return (links("Post").map { "+\($0.added.map(\.primaryKey)) -\($0.removed.map(\.primaryKey))" }, links("Tag").map { "\($0.added.count)/\($0.removed.count)" })
    }

    /// Before the fix, join tables had insert and delete triggers only: another program moving
    /// a link with `UPDATE` left history with the derived counts changed and no link change, so
    /// a replica kept the old link; and re-inserting a pair already there with `INSERT OR
    /// REPLACE` was recorded as a link added again.
    @Test func aJoinRowUpdatedMovesTheLinkAndOneReplacedWithItselfIsNoChange() throws {
        let (coordinator, post, tag0, tag1) = try postLinked(to: 1)
        let start = try coordinator.currentPersistentHistoryToken()
        try ForeignWriter.shell(path, "UPDATE _Post_tags SET dst = \(tag1) WHERE src = \(post);")
        let links = try linkChanges(coordinator, after: start)
        #expect(links.posts == ["+[\(tag1)] -[\(tag0)]"])
        #expect(links.tags.sorted() == ["0/1", "1/0"])
        let after = try coordinator.currentPersistentHistoryToken()
        try ForeignWriter.shell(path, "INSERT OR REPLACE INTO _Post_tags (src, dst) VALUES (\(post), \(tag1));")
        #expect(try history(coordinator, after: after).flatMap(\.changes).isEmpty, "the pair was there already")
    }

    /// Before the fix, moving a link with `UPDATE OR REPLACE` onto a link already there (SQLite
    /// removes that row and runs no delete trigger for it) recorded the link already there as
    /// added again: a replica counted it twice.
    @Test func aLinkMovedOntoOneAlreadyThereIsItsRemovalOnly() throws {
        let (coordinator, post, tag0, tag1) = try postLinked(to: 2)
        let start = try coordinator.currentPersistentHistoryToken()
        try ForeignWriter.shell(path, "UPDATE OR REPLACE _Post_tags SET dst = \(tag1) WHERE src = \(post) AND dst = \(tag0);")
        let links = try linkChanges(coordinator, after: start)
        #expect(links.posts == ["+[] -[\(tag0)]"])
        #expect(links.tags == ["0/1"])
        let counts = try coordinator.fetch(FetchRequest(entityName: "Tag")).filter { [tag0, tag1].contains($0.objectID.primaryKey) }.map { "\($0.objectID.primaryKey):\($0["postCount"].map { "\($0)" } ?? "nil")" }
        #expect(counts.sorted() == ["\(tag0):0", "\(tag1):1"])
    }

    /// A store whose join tables have the triggers of the version before (no probe for an
    /// `UPDATE OR REPLACE`) is upgraded when opened, not reported as altered by another program.
    @Test func joinTriggersOfTheVersionBeforeAreUpgradedNotReportedAsDrift() throws {
        let since: PersistentHistoryToken
        do { since = try open().currentPersistentHistoryToken() }
        let probe = "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = '_Post_tags' AND substr(name, -3) = '_ur';"
        let name = try ForeignWriter.shell(path, probe).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(name.hasSuffix("_ur"))
        _ = try ForeignWriter.shell(path, "DROP TRIGGER \"\(name)\";")
        let coordinator = try open()
        #expect(try ForeignWriter.shell(path, probe).trimmingCharacters(in: .whitespacesAndNewlines) == name, "reinstalled")
        let transactions = try history(coordinator, after: since)
        #expect(gaps(transactions).isEmpty, "\(transactions.map(\.processName))")
    }

    @Test func writesWorkUnderTrustedSchemaOff() throws {
        let coordinator = try open()
        let start = try coordinator.currentPersistentHistoryToken()
        try ForeignWriter.shell(path, "PRAGMA trusted_schema = OFF; INSERT INTO Tag (name) VALUES ('safe');")
        try ForeignWriter.python(path, "db.execute('PRAGMA trusted_schema = OFF')\ndb.execute(\"INSERT INTO Tag (name) VALUES ('py')\")\ndb.commit()")
        #expect(try history(coordinator, after: start).count == 2)
    }

    @Test func aKilledForeignTransactionLeavesNothing() throws {
        let coordinator = try open()
        let start = try coordinator.currentPersistentHistoryToken()
        let writer = try ForeignWriter.startPython(path, """
            db.execute("INSERT INTO Tag (name) VALUES ('half')")
            print("written", flush=True)
            import time
            time.sleep(60)
            """)
        let pipe = writer.standardOutput as! Pipe
        _ = pipe.fileHandleForReading.availableData
        kill(writer.processIdentifier, SIGKILL)
        writer.waitUntilExit()
        try ForeignWriter.shell(path, "INSERT INTO Tag (name) VALUES ('whole');")
        let transactions = try history(coordinator, after: start)
        #expect(transactions.map { value($0.changes.first, "name")?.after } == [.string("whole")])
    }

    @Test func changesWrittenWhileNoTributaryRanAreAllKeptAndUnknownBoundariesSaidSo() throws {
        var start: PersistentHistoryToken
        do {
            let coordinator = try open()
            start = try coordinator.currentPersistentHistoryToken()
        }
        // The writer stays open: closing the last connection would checkpoint the log and delete it.
        let writer = try ForeignWriter.startPython(path, """
            for i in range(5):
                db.execute("INSERT INTO Tag (name) VALUES (?)", ("early%d" % i,))
                db.commit()
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            for i in range(3):
                db.execute("INSERT INTO Tag (name) VALUES (?)", ("late%d" % i,))
                db.commit()
            print("written", flush=True)
            import time
            time.sleep(60)
            """)
        defer { kill(writer.processIdentifier, SIGKILL); writer.waitUntilExit() }
        _ = (writer.standardOutput as! Pipe).fileHandleForReading.availableData
        let coordinator = try open()
        let transactions = try history(coordinator, after: start)
        let names = transactions.flatMap { $0.changes.map { value($0, "name")?.after } }
        #expect(names == (0..<5).map { AttributeValue.string("early\($0)") } + (0..<3).map { .string("late\($0)") }, "every change, in order")
        #expect(transactions.first?.processName == "foreign, boundaries unknown")
        #expect(transactions.suffix(3).allSatisfy { $0.processName == "foreign" && $0.changes.count == 1 }, "the commits still in the log keep their boundaries: \(transactions.map { ($0.processName, $0.changes.count) })")
    }
}

extension ForeignCaptureTests {
    @Test func manyOwnTransactionsKeepTheLogBounded() throws {
        let coordinator = try open()
        for i in 0..<200 {
            var request = BatchInsertRequest(entityName: "Tag", objects: (0..<100).map { ["name": .string("t\(i)-\($0)"), "color": .string(String(repeating: "x", count: 200))] })
            request.resultType = .count
            do { try coordinator.execute(request) } catch { Issue.record("transaction \(i): \(error) \((error as? TributaryError)?.message ?? "")"); return }
        }
        let size = (try FileManager.default.attributesOfItem(atPath: path.path + "-wal")[.size] as? Int) ?? 0
        #expect(size < 16 << 20)
    }
}

extension ForeignCaptureTests {
    /// Two coordinators on one store (as two processes would be): the first opened, idle,
    /// holds the pins; the second writes. The idle one's maintenance restarts the log, and
    /// the writer holds no pin of its own that would keep it from restarting (the log grew
    /// to 17 MB when every coordinator pinned).
    @Test func anIdleSecondCoordinatorDoesNotKeepTheLogFromRestarting() throws {
        let idle = try open()
        let writer = try open()
        for i in 0..<300 {
            var request = BatchInsertRequest(entityName: "Tag", objects: (0..<100).map { ["name": .string("t\(i)-\($0)"), "color": .string(String(repeating: "x", count: 200))] })
            request.resultType = .count
            do { try writer.execute(request) } catch { Issue.record("transaction \(i): \(error)"); return }
            // The idle holder's maintenance runs once a second while the log changes: leave it
            // more than two chances per 50 transactions, as its timer runs late on a loaded machine.
            if i % 50 == 0 { usleep(2_500_000) }
        }
        let size = (try FileManager.default.attributesOfItem(atPath: path.path + "-wal")[.size] as? Int) ?? 0
        #expect(size < 8 << 20, "the log reached \(size) bytes")
        _ = try idle.currentPersistentHistoryToken()
    }
}

extension ForeignCaptureTests {
    /// A foreign writer at full speed, with SQLite's automatic checkpoints, while this
    /// process folds: every transaction keeps its boundaries, and the log is restarted
    /// (the pins let a checkpoint complete past 4 MB) so it does not grow without bound.
    @Test func aFastForeignWriterKeepsItsBoundariesAndTheLogStaysBounded() async throws {
        let coordinator = try open()
        let start = try coordinator.currentPersistentHistoryToken()
        let count = 1_500
        let writer = try ForeignWriter.startPython(path, """
            body = "x" * 3000
            for i in range(\(count)):
                db.execute("INSERT INTO Post (title, externalID, createdAt, content) VALUES (?, ?, 0, ?)", ("p%d" % i, "e%d" % i, body))
                if i % 3 == 0:
                    db.execute("UPDATE Tag SET color = ? WHERE 0", ("z",))
                db.commit()
            print("done", flush=True)
            """)
        // Fold as a watcher woken at each commit would (the token folds first), noting the log's size.
        var largest = 0
        while writer.isRunning {
            _ = try coordinator.currentPersistentHistoryToken()
            largest = max(largest, (try? FileManager.default.attributesOfItem(atPath: path.path + "-wal")[.size] as? Int) ?? 0)
        }
        writer.waitUntilExit()
        let transactions = try history(coordinator, after: start)
        #expect(transactions.count == count)
        let wrong = transactions.filter { $0.processName != "foreign" || $0.changes.count != 1 }
        #expect(wrong.isEmpty, "\(wrong.count) transactions not exact, the first with \(wrong.first?.changes.count ?? 0) changes")
        let titles = transactions.map { $0.changes.first.flatMap { value($0, "title")?.after } }
        #expect(titles == (0..<count).map { AttributeValue.string("p\($0)") }, "out of order")
        #expect(largest < 24 << 20, "the log reached \(largest) bytes (38 MB without restarts)")
    }
}

extension ForeignCaptureTests {
    /// The fold is one SQL transaction: a process killed while folding leaves the log as it
    /// was, and the next fold records every foreign transaction exactly once.
    @Test func aFolderKilledMidFoldLosesNothingAndRecordsNothingTwice() throws {
        let start: PersistentHistoryToken
        do { start = try open().currentPersistentHistoryToken() }
        // The writer stays open so that the log keeps every transaction's frames.
        let writer = try ForeignWriter.startPython(path, """
            for t in range(40):
                db.executemany("INSERT INTO Tag (name) VALUES (?)", [("t%d-%d" % (t, i),) for i in range(1000)])
                db.commit()
            print("written", flush=True)
            import time
            time.sleep(120)
            """)
        defer { kill(writer.processIdentifier, SIGKILL); writer.waitUntilExit() }
        _ = (writer.standardOutput as! Pipe).fileHandleForReading.availableData
        var killed = 0
        for round in 0..<4 {
            let folder = try TributaryProcess.start(["token", path.path], environment: [:], output: dir.file("fold-\(round).log"))
            usleep(UInt32.random(in: 20_000...300_000))
            if folder.isRunning { kill(folder.processIdentifier, SIGKILL); killed += 1 }
            folder.waitUntilExit()
        }
        let transactions = try history(try open(), after: start)
        #expect(transactions.count == 40, "killed \(killed) folders")
        #expect(transactions.allSatisfy { $0.changes.count == 1_000 && $0.processName == "foreign" })
        let names = transactions.flatMap { $0.changes.compactMap { value($0, "name")?.after } }
        #expect(names.count == 40_000 && Set(names).count == 40_000, "every change once")
    }
}

extension ForeignCaptureTests {
    static let dropPostTriggers = """
        for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'Post' AND name GLOB '_tributary_capture_*'").fetchall():
            db.execute('DROP TRIGGER "%s"' % name)
        db.execute("INSERT INTO Post (title, externalID, createdAt, content) VALUES ('unseen', 'u1', 0, 'x')")
        db.commit()
        print("dropped", flush=True)
        """

    func gaps(_ transactions: [PersistentHistoryTransaction]) -> [PersistentHistoryTransaction] {
        transactions.filter { $0.processName == "capture gap" }
    }

    /// Triggers another program dropped while no Tributary ran: the next open reinstalls
    /// them and says, in history, that writes to the table since the last check may be missing.
    @Test func triggersDroppedWhileNoTributaryRanAreReinstalledAndTheGapIsRecorded() throws {
        let since: PersistentHistoryToken
        do { since = try open().currentPersistentHistoryToken() }
        #expect(try ForeignWriter.python(path, Self.dropPostTriggers).contains("dropped"))
        let coordinator = try open()
        _ = try ForeignWriter.shell(path, "INSERT INTO Post (title, externalID, createdAt, content) VALUES ('seen', 's1', 0, 'x');")
        let transactions = try history(coordinator, after: since)
        let gap = try #require(gaps(transactions).first, "\(transactions.map(\.processName))")
        #expect(gap.contextName?.contains("to Post since token \(since.value) may be missing") == true, "\(gap.contextName ?? "")")
        #expect(gap.changes.isEmpty)
        let captured = transactions.filter { $0.processName == "foreign" }.compactMap { change($0, "Post", .insert) }
        #expect(captured.map { value($0, "title")?.after } == [.string("seen")], "the triggers are back")
    }

    /// Dropped while a Tributary process has the store open: its next read of history
    /// notices (the schema changed), repairs and records the gap.
    @Test func triggersDroppedWhileTributaryRunsAreNoticedAtTheNextRead() throws {
        let coordinator = try open()
        let since = try coordinator.currentPersistentHistoryToken()
        #expect(try ForeignWriter.python(path, Self.dropPostTriggers).contains("dropped"))
        _ = try coordinator.currentPersistentHistoryToken()
        _ = try ForeignWriter.shell(path, "INSERT INTO Post (title, externalID, createdAt, content) VALUES ('seen', 's1', 0, 'x');")
        let transactions = try history(coordinator, after: since)
        #expect(gaps(transactions).count == 1, "\(transactions.map(\.processName))")
        #expect(transactions.filter { $0.processName == "foreign" }.count == 1)
    }

    /// SQLite 3.40 leaves the frames of a transaction that rolled a savepoint back after its
    /// pages spilled into the log with zero salts and checksums (its readers trust the
    /// wal-index; its recovery would drop them). Before the fix, boundaries were read by the
    /// salts and the checksum chain: that transaction, and every later one in the log, came
    /// out in pieces of unknown boundaries, the next transaction merged into the last piece.
    @Test func aTransactionThatRolledBackASavepointAfterItsPagesSpilledKeepsItsBoundaries() throws {
        // A table without indexes: its pages fill once each before the savepoint, and are
        // written again only inside it, where SQLite starts writing frames without salts.
        let plain = dir.file("plain.db")
        let (coordinator, start) = try Fixtures.adopted(plain, schema: "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'a');")
        try ForeignWriter.python(plain, """
            db.isolation_level = None
            db.execute("PRAGMA cache_size = 10")
            db.execute("UPDATE t SET v = 'b' WHERE id = 1")
            db.execute("BEGIN")
            db.executemany("INSERT INTO t (v) VALUES (?)", [("y" * 50,)] * 3000)
            db.execute("SAVEPOINT s")
            db.executemany("INSERT INTO t (v) VALUES (?)", [("z" * 100,)] * 20000)
            db.execute("ROLLBACK TO s")
            db.execute("UPDATE t SET v = 'c' WHERE id = 1")
            db.execute("COMMIT")
            db.execute("DELETE FROM t WHERE id = 2")
            """)
        let transactions = try coordinator.fetchHistory(.fetchHistory(after: start))
        #expect(transactions.map(\.processName) == ["foreign", "foreign", "foreign"] && transactions.map(\.changes.count) == [1, 3001, 1],
                "\(transactions.map { ($0.processName, $0.changes.count) })")
    }
}

extension ForeignCaptureTests {
    /// Another program holding the write lock past the busy timeout while the holder's upkeep
    /// tried to re-pin after a large transaction: the failed `BEGIN IMMEDIATE` dropped the pin
    /// the holder had, a checkpoint then copied the frames not read yet and the log restarted
    /// over them, and those transactions were merged as "boundaries unknown". The pin now stays
    /// where it was until the upkeep gets the lock.
    @Test func aWriterHoldingTheLockPastTheBusyTimeoutLeavesThePinAndTheBoundaries() throws {
        let description = PersistentStoreDescription(url: path)
        description.persistentHistoryTracking = true
        description.busyTimeout = 0.3
        let coordinator = try Fixtures.blogCoordinator(description)
        let start = try coordinator.currentPersistentHistoryToken()
        _ = try ForeignWriter.python(path, """
            import time
            db.executemany("INSERT INTO Tag (name, color) VALUES (?, ?)", [("big%d" % i, "x" * 1000) for i in range(4000)])
            db.commit()
            for i in range(3):
                db.execute("INSERT INTO Tag (name) VALUES (?)", ("small%d" % i,))
                db.commit()
                time.sleep(0.5)
            db.isolation_level = None
            db.execute("BEGIN IMMEDIATE")
            time.sleep(3)
            db.execute("ROLLBACK")
            db.execute("PRAGMA wal_checkpoint(PASSIVE)")
            db.execute("INSERT INTO Tag (name) VALUES ('last')")
            """)
        let transactions = try history(coordinator, after: start)
        #expect(transactions.map { "\($0.processName) \($0.changes.count)" } == ["foreign 4000", "foreign 1", "foreign 1", "foreign 1", "foreign 1"],
                "\(transactions.map { "\($0.processName) \($0.changes.count)" })")
    }
}

