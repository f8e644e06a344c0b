import Foundation
import Testing
@testable import Tributary
import TributaryTestSupport

/// Other programs that move the database's pages under the capture: `VACUUM` renumbers
/// every page, the capture log's root among them, while commits made before it may still
/// wait in the write-ahead log to be read for their boundaries.
@Suite struct SchemaMoveCaptureTests {
    let dir = TemporaryDirectory()
    var path: URL { dir.file("app.db") }

    /// Before the fix, commits made before the `VACUUM` were read at the log's new root page,
    /// which then held another table's rows: a commit seemed to end at that table's largest
    /// rowid, and the transactions up to it were merged into one still marked exact.
    @Test func commitsAfterAnotherProgramsVacuumKeepTheirOwnTransactions() throws {
        // Pages of another table before the log's root, so that the VACUUM moves it.
        try ForeignWriter.shell(path, """
            CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT);
            CREATE TABLE junk (x BLOB);
            WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 50) INSERT INTO junk SELECT randomblob(3000) FROM r;
            """)
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        let coordinator = try Fixtures.adoptedCoordinator(path)
        let start = try coordinator.currentPersistentHistoryToken()
        let root = { try ForeignWriter.shell(path, "SELECT rootpage FROM sqlite_master WHERE name = '_tributary_capture_log';") }
        let before = try root()
        try ForeignWriter.python(path, """
            db.isolation_level = None
            db.execute("VACUUM")
            """)
        #expect(try root() != before, "the VACUUM moved the log's root page")
        for round in 0..<3 {
            try ForeignWriter.python(path, """
                db.isolation_level = None
                db.execute("INSERT INTO t VALUES (\(10 + 2 * round), 'first')")
                db.execute("INSERT INTO t VALUES (\(11 + 2 * round), 'second')")
                """)
            _ = try coordinator.fetchHistory(.fetchHistory(after: start))
        }
        let transactions = try coordinator.fetchHistory(.fetchHistory(after: start))
        let shape = transactions.map { "\($0.processName) \($0.changes.map { String($0.changedObjectID.primaryKey) }.joined(separator: ","))" }
        #expect(shape == (10...15).map { "foreign \($0)" }, "one transaction per autocommit insert, exact")
    }
}
