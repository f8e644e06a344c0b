import Foundation
import Testing
@testable import Tributary
import TributaryTestSupport

/// A process that has the store open while `adopt` runs again (another program added a
/// column, the user adopted again to capture it) holds the model from before: it must not
/// fold the new triggers' rows with it, nor install its triggers over them.
extension AdoptionTests {
    @Test func aProcessOpenWhileTheDatabaseIsAdoptedAgainDoesNotUndoTheNewCapture() throws {
        let (old, start) = try adoptedApp()
        try ForeignWriter.shell(path, "ALTER TABLE users ADD COLUMN nickname TEXT;")
        _ = try old.fetchHistory(.fetchHistory(after: start))
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        try ForeignWriter.shell(path, "UPDATE users SET nickname = 'a' WHERE id = 1;")
        // The process open before refuses to read or write with its old model, with one line.
        let read = try #require(throws: TributaryError.self) { try old.fetchHistory(.fetchHistory(after: start)) }
        let write = try #require(throws: TributaryError.self) {
            try old.execute(BatchUpdateRequest(entityName: "users", predicate: try StorePredicate(format: "name == 'Bob'"), propertiesToUpdate: ["name": .string("Robert")]))
        }
        for error in [read, write] {
            #expect(error.code == .incompatibleModel && error.message.hasPrefix("another process changed the store's model since this one opened it")
                    && error.hint?.contains("open the store again") == true, "\(error)")
        }
        try ForeignWriter.shell(path, "UPDATE users SET nickname = 'b' WHERE id = 1;")
        let fresh = try open()
        let nicknames = try fresh.fetchHistoryChanges(.fetchHistory(after: start)).compactMap { properties($0)["nickname"]?.after?.storedText }
        #expect(nicknames == ["a", "b"], "both of the shell's updates of the new column are recorded: \(nicknames)")
        #expect(try ForeignWriter.shell(path, "SELECT name FROM users WHERE id = 2;") == "Bob\n", "the refused write wrote nothing")
    }

    @Test func adoptingAgainWhileAnotherProgramKeepsWritingLosesNoneOfItsWrites() throws {
        try makeApp()
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        try ForeignWriter.shell(path, "ALTER TABLE counters ADD COLUMN note TEXT;")
        // A writer that never stops; its millisecond between commits lets another take the
        // lock (without it, SQLite's busy handler of any other connection, the sqlite3 shell's
        // too, can wait out its timeout on a loaded machine).
        let writer = try ForeignWriter.startPython(path, """
            import time
            i = 0
            while True:
                db.execute("INSERT INTO counters (hits) VALUES (?)", (i,))
                db.commit()
                i += 1
                time.sleep(0.001)
            """)
        // SIGKILL: the child inherits the test thread's blocked signals, SIGTERM among them.
        defer { kill(writer.processIdentifier, SIGKILL) }
        Thread.sleep(forTimeInterval: 0.3)
        // Its writes are folded in the transaction that adopts again: none can come between
        // (folding first and then adopting failed as long as the writer went on).
        let report = try PersistentStoreCoordinator.adoptDatabase(at: path, busyTimeout: 30)
        #expect(report.wasAdopted)
        Thread.sleep(forTimeInterval: 0.2)
        kill(writer.processIdentifier, SIGKILL)
        writer.waitUntilExit()
        let coordinator = try open()
        let inserted = try coordinator.fetchHistoryChanges(.fetchHistory(after: nil)).filter { $0.changedObjectID.entityName == "counters" && $0.changeType == .insert }
        let rows = try ForeignWriter.shell(path, "SELECT count(*) FROM counters WHERE id > 1;").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(Int(rows) ?? 0 > 50, "the writer wrote throughout: \(rows)")
        #expect(inserted.count == Int(rows) && Set(inserted.map(\.changedObjectID.primaryKey)).count == inserted.count, "every row recorded once: \(inserted.count) of \(rows)")
    }
}
