import Foundation
import Testing
@testable import Tributary
import TributaryTestSupport

/// Another program writes to a table and then drops, renames or narrows it before any
/// Tributary process has read the capture log, or drops the log itself: history stays
/// readable, what can still be read is recorded (a renamed table through its triggers,
/// which SQLite moves with it; narrowed columns with the model they were logged under),
/// and what cannot is said.
extension AdoptionTests {
    /// The gaps' descriptions and every change, from the start of history.
    private func history(_ coordinator: PersistentStoreCoordinator) throws -> (gaps: [String], changes: [String]) {
        let transactions = try coordinator.fetchHistory(.fetchHistory(after: nil))
        let gaps = transactions.filter { $0.processName == "capture gap" }.compactMap(\.contextName)
        let changes = transactions.flatMap(\.changes).map { change in
            let values = properties(change).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.after?.storedText ?? "nil")" }
            return "\(change.changeType) \(change.changedObjectID.entityName)/\(change.changedObjectID.primaryKey) \(values.joined(separator: " "))"
        }
        return (gaps, changes)
    }

    @Test func writesToATableDroppedBeforeTheyWereReadAreSaidAsAGapAndTheOthersAreRecorded() throws {
        try makeApp()
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        try ForeignWriter.shell(path, """
            INSERT INTO counters VALUES (2, 5);
            UPDATE users SET name = 'Anna' WHERE id = 1;
            DROP TABLE counters;
            """)
        // Every read of history failed here ("no such table: counters"), adopting again too.
        let (gaps, changes) = try history(try open())
        #expect(changes.contains("update users/1 name=Anna"), "\(changes)")
        #expect(!changes.contains { $0.contains("counters") }, "\(changes)")
        #expect(gaps.contains { $0.hasPrefix("writes by other programs to counters were not recorded: the table was dropped") }, "\(gaps)")
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        try ForeignWriter.shell(path, "UPDATE users SET name = 'Ann' WHERE id = 1;")
        #expect(try history(try open()).changes.last == "update users/1 name=Ann")
    }

    @Test func writesToATableRenamedBeforeTheyWereReadAreRecordedWhenTheDatabaseIsAdoptedAgain() throws {
        try makeApp()
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        try ForeignWriter.shell(path, """
            UPDATE counters SET hits = 1 WHERE id = 1;
            ALTER TABLE counters RENAME TO tallies;
            INSERT INTO tallies VALUES (2, 7);
            """)
        // The user adopts again at once, as the error said: it failed, and every read after it.
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        try ForeignWriter.shell(path, "INSERT INTO tallies VALUES (3, 9);")
        let (_, changes) = try history(try open())
        #expect(changes.contains("update counters/1 hits=1") && changes.contains("insert counters/2 hits=7"),
                "the writes before adopting again, read from the renamed table under the model they were logged with: \(changes)")
        #expect(changes.last == "insert tallies/3 hits=9", "\(changes)")
    }

    @Test func anUpdateLoggedBeforeAColumnWasDroppedIsRecordedWhenTheDatabaseIsAdoptedAgain() throws {
        try makeApp()
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        try ForeignWriter.shell(path, """
            UPDATE users SET avatar = X'01' WHERE id = 1;
            PRAGMA legacy_alter_table = ON;
            ALTER TABLE users DROP COLUMN score;
            """)
        // Adopting again numbered the columns anew before the log row was read: the update
        // of the last column was read as one of a column that no longer exists, and lost.
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        let coordinator = try open()
        let change = try #require(try coordinator.fetchHistoryChanges(.fetchHistory(after: nil)).first { $0.changeType == .update })
        #expect(properties(change)["avatar"]?.before == .data(Data()) && properties(change)["avatar"]?.after == .data(Data([1])), "\(properties(change))")
    }

    /// Before the fix, a column another program dropped before the fold read the rows it
    /// had written was recorded as nil: an insert with `score=nil` (it was 9), an update of
    /// `score` from 1 to nil (it was set to 2). Its value is now not recorded, and said so.
    @Test func aColumnDroppedBeforeItsWritesWereReadIsChangedWithoutAValueNotNil() throws {
        try makeApp()
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        try ForeignWriter.shell(path, """
            UPDATE users SET score = 1 WHERE id = 1;
            INSERT INTO users (id, email, name, score) VALUES (3, 'cy@example.com', 'Cy', 9);
            UPDATE users SET score = 2 WHERE id = 1;
            PRAGMA legacy_alter_table = ON;
            ALTER TABLE users DROP COLUMN score;
            """)
        let changes = try open().fetchHistoryChanges(.fetchHistory(after: nil)).filter { $0.changedObjectID.entityName == "users" }
        let insert = try #require(changes.first { $0.changeType == .insert })
        #expect(properties(insert)["name"]?.after == .string("Cy"))
        #expect(insert.properties.first { $0.name == "score" }.map { $0.isValueExcluded && $0.after == nil } ?? true, "\(properties(insert))")
        // The first update's new value is the second's logged old one; the second's is gone.
        let updates = changes.filter { $0.changeType == .update }
        #expect(updates.count == 2 && properties(updates.first)["score"].map { $0.before == .double(0) && $0.after == .double(1) } == true, "\(updates.map(properties))")
        let score = try #require(updates.last?.properties.first { $0.name == "score" })
        #expect(score.isValueExcluded && score.before == nil && score.after == nil, "\(score)")
    }

    @Test func aCaptureLogAnotherProgramDropsIsMadeAgainNumberedOnAndTheLossIsSaid() throws {
        try makeApp()
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        try ForeignWriter.shell(path, "INSERT INTO counters VALUES (2, 1);")
        #expect(try history(try open()).changes == ["insert counters/2 hits=1"])
        try ForeignWriter.shell(path, "INSERT INTO counters VALUES (3, 1); DROP TABLE _tributary_capture_log;")
        #expect(throws: ForeignWriter.Failure.self, "a write with the log missing fails whole") {
            try ForeignWriter.shell(path, "INSERT INTO counters VALUES (4, 1);")
        }
        _ = try open()
        try ForeignWriter.shell(path, "INSERT INTO counters VALUES (5, 1);")
        // The log was made again from 0, under the folded position: its rows were taken as folded.
        let (gaps, changes) = try history(try open())
        #expect(changes == ["insert counters/2 hits=1", "insert counters/5 hits=1"], "\(changes)")
        #expect(gaps.contains { $0.contains("another program dropped Tributary's capture log") }, "\(gaps)")
        #expect(try ForeignWriter.shell(path, "SELECT id FROM counters ORDER BY id;") == "1\n2\n3\n5\n")
    }
}
