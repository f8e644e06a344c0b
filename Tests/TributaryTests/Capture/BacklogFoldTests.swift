import Foundation
import Testing
@testable import Tributary
import TributaryTestSupport

/// A backlog of other programs' writes folded at once, over many transactions: the walk
/// carries each row's state from one transaction to the one before (a key deleted, taken
/// again, replaced, moved), so that every change's before values are what the row held.
@Suite struct BacklogFoldTests {
    let dir = TemporaryDirectory()
    var path: URL { dir.file("app.db") }

    /// Thousands of random writes over sixty keys in transactions of one to twenty statements,
    /// by a Python program; replaying the history over the rows as they were before must
    /// meet every change's before values and end at the table as it is. `pinned`: a
    /// coordinator stays open meanwhile, so the boundaries are exact; else the program's
    /// close checkpoints and deletes the log, and the fold cuts the backlog blindly.
    @Test(arguments: [false, true])
    func replayingTheHistoryOfARandomBacklogMeetsEveryBeforeValueAndEndsAtTheTable(pinned: Bool) throws {
        try ForeignWriter.shell(path, """
            CREATE TABLE items (id INTEGER PRIMARY KEY, v TEXT, n INTEGER);
            INSERT INTO items VALUES (1, 'one', 1), (2, 'two', NULL), (3, NULL, 3);
            """)
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        var start: PersistentHistoryToken
        var open: PersistentStoreCoordinator? = try Fixtures.adoptedCoordinator(path)
        start = try open!.currentPersistentHistoryToken()
        if !pinned { open = nil }
        try ForeignWriter.python(path, """
            import random
            r = random.Random(22)
            for t in range(600):
                for s in range(r.randint(1, 20)):
                    k = r.randint(1, 60)
                    op = r.random()
                    v = r.choice([None, "", "x%d" % r.randint(0, 9), "long" * r.randint(1, 40)])
                    n = r.choice([None, 0, r.randint(-5, 5)])
                    if op < 0.35:
                        db.execute("INSERT OR REPLACE INTO items VALUES (?, ?, ?)", (k, v, n))
                    elif op < 0.65:
                        db.execute("UPDATE items SET v = ?, n = coalesce(n, 0) + 1 WHERE id = ?", (v, k))
                    elif op < 0.85:
                        db.execute("DELETE FROM items WHERE id = ?", (k,))
                    else:
                        db.execute("UPDATE OR IGNORE items SET id = ? WHERE id = ?", (r.randint(1, 60), k))
                if r.random() < 0.1:
                    db.rollback()
                else:
                    db.commit()
            """)
        let coordinator = try open ?? Fixtures.adoptedCoordinator(path)
        let transactions = try coordinator.fetchHistory(.fetchHistory(after: start))
        #expect(transactions.allSatisfy { $0.processName == (pinned ? "foreign" : "foreign, boundaries unknown") })
        var rows: [Int64: [String: AttributeValue]] = [
            1: ["v": .string("one"), "n": .integer(1)], 2: ["v": .string("two"), "n": .null], 3: ["v": .null, "n": .integer(3)],
        ]
        var mismatches: [String] = []
        for (t, change) in transactions.enumerated().flatMap({ t, transaction in transaction.changes.map { (t, $0) } }) {
            let key = change.changedObjectID.primaryKey
            let at = "transaction \(t), \(change.changeType) \(key)"
            switch change.changeType {
            case .insert:
                if rows[key] != nil { mismatches.append("\(at): the row was there") }
                rows[key] = Dictionary(uniqueKeysWithValues: change.properties.map { ($0.name, $0.after ?? .null) })
            case .update, .delete:
                guard let row = rows[key] else { mismatches.append("\(at): no such row"); continue }
                for property in change.properties where (row[property.name] ?? .null) != (property.before ?? .null) {
                    mismatches.append("\(at): \(property.name) was \(row[property.name] ?? .null), recorded \(property.before ?? .null)")
                }
                if change.changeType == .delete {
                    rows[key] = nil
                } else {
                    for property in change.properties { rows[key]?[property.name] = property.after ?? .null }
                }
            }
        }
        #expect(mismatches.count == 0, "the first: \(mismatches.prefix(5))")
        var table: [Int64: [String: AttributeValue]] = [:]
        try coordinator.persistentStores[0].database.read { db in
            let statement = try db.makeStatement("SELECT id, v, n FROM items")
            while try statement.step() { table[statement.int64(at: 0)] = ["v": statement.value(at: 1), "n": statement.value(at: 2)] }
        }
        #expect(rows == table, "the replay ends at the table as it is")
        // Blind, the backlog is cut every 1,000 log rows: several transactions still.
        #expect(table.count > 10 && transactions.count > (pinned ? 100 : 3), "the backlog did write (\(table.count) rows, \(transactions.count) transactions)")
    }

    /// Before the fix, a backlog of unknown boundaries was cut every 1,000 log rows and each
    /// part folded to net changes: an object another program inserted, updated twice and
    /// deleted, in four transactions, left no trace at all.
    @Test func whereBoundariesAreUnknownNoChangeNetsOut() throws {
        try ForeignWriter.shell(path, "CREATE TABLE items (id INTEGER PRIMARY KEY, v INTEGER);")
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        let start = try Fixtures.adoptedCoordinator(path).currentPersistentHistoryToken()
        // Each shell closes the last connection, which checkpoints and deletes the log: the boundaries go with it.
        for sql in ["INSERT INTO items VALUES (1, 100);", "UPDATE items SET v = 200 WHERE id = 1;", "UPDATE items SET v = 300 WHERE id = 1;",
                    "DELETE FROM items WHERE id = 1;", "INSERT INTO items VALUES (2, 5);"] {
            try ForeignWriter.shell(path, sql)
        }
        let transactions = try Fixtures.adoptedCoordinator(path).fetchHistory(.fetchHistory(after: start))
        let changes = transactions.map { $0.changes.map { change in
            "\(change.changeType) \(change.changedObjectID.primaryKey) " + change.properties.map { "\($0.before.map { "\($0)" } ?? "-")→\($0.after.map { "\($0)" } ?? "-")" }.joined()
        } }
        #expect(changes == [["insert 1 -→100"], ["update 1 100→200"], ["update 1 200→300"], ["delete 1 300→-", "insert 2 -→5"]])
        #expect(transactions.allSatisfy { $0.processName == "foreign, boundaries unknown" })
    }
}
