import Foundation
import Testing
@testable import Tributary
import TributaryTestSupport

/// A primary key another program changes (`UPDATE counters SET id = 7 WHERE id = 1`): the
/// delete at the old key and the insert at the new one are linked (`movedTo`, `movedFrom`),
/// by the net effect of the transaction, so consumers can follow the object (issue 22).
@Suite struct KeyChangeTests {
    let dir = TemporaryDirectory()
    var path: URL { dir.file("app.db") }

    /// An adopted database with `counters` rows `(key, hits)`, and the token before the test's writes.
    func adopted(_ rows: [(Int64, Int64)] = [(1, 10)]) throws -> (PersistentStoreCoordinator, PersistentHistoryToken) {
        let values = rows.map { "(\($0.0), \($0.1))" }.joined(separator: ", ")
        try ForeignWriter.shell(path, "CREATE TABLE counters (id INTEGER PRIMARY KEY, hits INTEGER NOT NULL); INSERT INTO counters VALUES \(values);")
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        let coordinator = try open()
        return (coordinator, try coordinator.currentPersistentHistoryToken())
    }

    func open() throws -> PersistentStoreCoordinator {
        try Fixtures.adoptedCoordinator(path)
    }

    /// The one transaction after `start`, each change as `type key (moved) hits`, e.g.
    /// `delete 1 →7 hits=10`, `insert 7 ←1 hits=10`.
    func summary(_ coordinator: PersistentStoreCoordinator, after start: PersistentHistoryToken) throws -> [String] {
        let transactions = try coordinator.fetchHistory(.fetchHistory(after: start))
        #expect(transactions.count == 1, "\(transactions.map(\.changes))")
        return (transactions.first?.changes ?? []).map { change in
            let hits = change.properties.first { $0.name == "hits" }
            let value = change.changeType == .delete ? hits?.before : hits?.after
            var text = "\(change.changeType) \(change.changedObjectID.primaryKey)"
            if let from = change.movedFrom { text += " ←\(from.primaryKey)" }
            if let to = change.movedTo { text += " →\(to.primaryKey)" }
            if change.changeType != .update { text += " hits=\(value.map(String.init(describing:)) ?? "-")" }
            return text
        }
    }

    @Test func aKeyChangeIsADeleteAndAnInsertLinkedToEachOther() throws {
        let (coordinator, start) = try adopted()
        try ForeignWriter.shell(path, "UPDATE counters SET id = 7 WHERE id = 1;")
        #expect(try summary(coordinator, after: start) == ["delete 1 →7 hits=10", "insert 7 ←1 hits=10"])
        let changes = try coordinator.fetchHistoryChanges(.fetchHistory(after: start))
        let storeID = try #require(coordinator.persistentStores.first?.identifier)
        #expect(changes[0].movedTo == ObjectID(storeID: storeID, entityName: "counters", primaryKey: 7) && changes[0].movedFrom == nil)
        #expect(changes[1].movedFrom == ObjectID(storeID: storeID, entityName: "counters", primaryKey: 1) && changes[1].movedTo == nil)
        // The cursor's views, and their copies, carry the link too.
        var views: [(ObjectID?, ObjectID?)] = []
        try coordinator.enumerateHistoryChanges(.fetchHistory(after: start)) { view in
            views.append((view.movedFrom, view.movedTo))
            let copy = try view.copy()
            #expect(copy == changes[view.index])
        }
        #expect(views.map(\.0) == [nil, changes[0].changedObjectID] && views.map(\.1) == [changes[1].changedObjectID, nil])
        #expect(try coordinator.verifyHistoryChain().problem == nil, "the chain covers the payload with its links")
    }

    @Test func columnsUpdatedWithTheKeyAreTheInsertsValues() throws {
        let (coordinator, start) = try adopted()
        try ForeignWriter.shell(path, "UPDATE counters SET id = 7, hits = hits + 1 WHERE id = 1;")
        #expect(try summary(coordinator, after: start) == ["delete 1 →7 hits=10", "insert 7 ←1 hits=11"])
    }

    @Test func aKeyChangedTwiceInATransactionLinksTheFirstKeyToTheLast() throws {
        let (coordinator, start) = try adopted()
        try ForeignWriter.shell(path, """
            BEGIN;
            UPDATE counters SET id = 7 WHERE id = 1;
            UPDATE counters SET hits = 20 WHERE id = 7;
            UPDATE counters SET id = 9 WHERE id = 7;
            COMMIT;
            """)
        #expect(try summary(coordinator, after: start) == ["delete 1 →9 hits=10", "insert 9 ←1 hits=20"])
    }

    @Test func aKeyChangeThenADeleteIsADeleteOfTheFirstKey() throws {
        let (coordinator, start) = try adopted()
        try ForeignWriter.shell(path, "BEGIN; UPDATE counters SET id = 7, hits = 5 WHERE id = 1; DELETE FROM counters WHERE id = 7; COMMIT;")
        #expect(try summary(coordinator, after: start) == ["delete 1 hits=10"])
    }

    @Test func aKeyChangeOntoAKeyInUseDeletesTheRowItReplaced() throws {
        let (coordinator, start) = try adopted([(1, 10), (7, 70)])
        try ForeignWriter.shell(path, "UPDATE OR REPLACE counters SET id = 7 WHERE id = 1;")
        #expect(try summary(coordinator, after: start) == ["delete 7 hits=70", "delete 1 →7 hits=10", "insert 7 ←1 hits=10"])
        // A conflict that is not replaced changes nothing.
        let next = try coordinator.currentPersistentHistoryToken()
        try ForeignWriter.shell(path, "INSERT INTO counters VALUES (8, 80); UPDATE OR IGNORE counters SET id = 8 WHERE id = 7;")
        #expect(try coordinator.fetchHistoryChanges(.fetchHistory(after: next)).map { "\($0.changeType) \($0.changedObjectID.primaryKey)" } == ["insert 8"])
    }

    @Test func keysSwappedInATransactionAreTwoLinkedMoves() throws {
        let (coordinator, start) = try adopted([(1, 10), (2, 20)])
        try ForeignWriter.shell(path, """
            BEGIN;
            UPDATE counters SET id = 0 WHERE id = 1;
            UPDATE counters SET id = 1 WHERE id = 2;
            UPDATE counters SET id = 2 WHERE id = 0;
            COMMIT;
            """)
        #expect(try summary(coordinator, after: start) == ["delete 1 →2 hits=10", "delete 2 →1 hits=20", "insert 1 ←2 hits=20", "insert 2 ←1 hits=10"])
    }

    @Test(arguments: [5, 6, 7, 8]) func aStoreWithTheOlderTriggersIsUpgradedWithoutACaptureGap(format: Int) throws {
        do { _ = try adopted() }
        let trigger = { (suffix: String) in
            try ForeignWriter.shell(self.path, "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name GLOB '_tributary_capture_*_\(suffix)';")
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let (keyReplace, probe) = (try trigger("kr"), try trigger("r"))
        #expect(!keyReplace.isEmpty && !probe.isEmpty)
        // The store as history format 5, 6, 7 or 8 left it: column triggers not comparing
        // storage classes, before 8 comparing by the column's collation; before 7 the
        // replace probe without its WHEN guard, and in format 5 no key-replace trigger.
        let guarded = try ForeignWriter.shell(path, "SELECT sql FROM sqlite_master WHERE name = '\(probe)';").trimmingCharacters(in: .whitespacesAndNewlines)
        let unguarded = guarded.replacingOccurrences(of: #" WHEN .* BEGIN "#, with: " BEGIN ", options: .regularExpression)
        #expect(guarded.contains(" WHEN EXISTS ") && !unguarded.contains(" WHEN "))
        let columns = try ForeignWriter.shell(path, "SELECT sql || ';' FROM sqlite_master WHERE type = 'trigger' AND name GLOB '_tributary_capture_*_u*' ORDER BY name;")
        let dropColumns = try ForeignWriter.shell(path, "SELECT 'DROP TRIGGER ' || name || ';' FROM sqlite_master WHERE type = 'trigger' AND name GLOB '_tributary_capture_*_u*' ORDER BY name;")
        let typed = #" OR typeof\(OLD\."[^"]+"\) <> typeof\(NEW\."[^"]+"\) BEGIN "#
        #expect(columns.contains(" COLLATE BINARY OR typeof(OLD."))
        let untyped = columns.replacingOccurrences(of: typed, with: " BEGIN ", options: .regularExpression)
        #expect(!untyped.contains("typeof") && untyped.contains(" COLLATE BINARY BEGIN "))
        try ForeignWriter.shell(path, dropColumns + (format == 8 ? untyped : untyped.replacingOccurrences(of: " COLLATE BINARY BEGIN ", with: " BEGIN "))
            + (format < 7 ? "DROP TRIGGER \(probe); \(unguarded); " : "")
            + (format == 5 ? "DROP TRIGGER \(keyReplace); " : "") + "UPDATE _tributary_metadata SET value = '\(format)' WHERE key = 'historyFormat';")
        let coordinator = try open()
        #expect(try ForeignWriter.shell(path, "SELECT value FROM _tributary_metadata WHERE key = 'historyFormat';") == "\(HistorySchema.formatVersion)\n")
        #expect(try trigger("kr") == keyReplace)
        #expect(try ForeignWriter.shell(path, "SELECT sql FROM sqlite_master WHERE name = '\(probe)';").trimmingCharacters(in: .whitespacesAndNewlines) == guarded)
        #expect(try ForeignWriter.shell(path, "SELECT sql || ';' FROM sqlite_master WHERE type = 'trigger' AND name GLOB '_tributary_capture_*_u*' ORDER BY name;") == columns)
        #expect(try !coordinator.fetchHistory(.fetchHistory(after: nil)).contains { $0.processName == "capture gap" })
    }

    @Test func aReplaceProbeAlteredByAnotherProgramIsAGap() throws {
        do { _ = try adopted() }
        let probe = try ForeignWriter.shell(path, "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name GLOB '_tributary_capture_*_r';")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        try ForeignWriter.shell(path, "DROP TRIGGER \(probe); CREATE TRIGGER \(probe) BEFORE INSERT ON counters WHEN 0 BEGIN SELECT 1; END;")
        let coordinator = try open()
        #expect(try coordinator.fetchHistory(.fetchHistory(after: nil)).contains { $0.processName == "capture gap" })
    }
}

/// The payload keeps the link in a flag bit of the change's type, so payloads written before
/// (without it) decode as they did.
@Suite struct MovedKeyPayloadTests {
    func encoded(_ change: RecordedChange) -> [UInt8] {
        var body = ByteWriter()
        var names = NameTable()
        HistoryPayload.encodeChange(change, into: &body, names: &names)
        return body.bytes
    }

    @Test func aChangeWithoutALinkIsEncodedAsBefore() throws {
        // Type 2 (delete), entity name 0, key 1 (zigzag 2), no properties: the format 5 bytes.
        let plain = RecordedChange(type: .delete, entity: "counters", primaryKey: 1, properties: [])
        #expect(encoded(plain) == [2, 0, 2, 0])
        var reader = ByteReader(bytes: [2, 0, 2, 0])
        let decoded = try HistoryPayload.decodeChange(&reader, names: ["counters"])
        #expect(decoded.type == .delete && decoded.primaryKey == 1 && decoded.movedKey == nil)
    }

    @Test func aLinkRoundTrips() throws {
        let moved = RecordedChange(type: .insert, entity: "counters", primaryKey: 7, properties: [RecordedChange.Property(name: "hits", after: .integer(1))], movedKey: 1)
        let bytes = encoded(moved)
        #expect(bytes.first == HistoryPayload.movedFlag)
        var reader = ByteReader(bytes: bytes)
        let decoded = try HistoryPayload.decodeChange(&reader, names: ["counters", "hits"])
        #expect(decoded.type == .insert && decoded.primaryKey == 7 && decoded.movedKey == 1 && decoded.properties.first?.after == .integer(1))
        var damaged = ByteReader(bytes: [0x83, 0, 2, 2, 0])
        #expect(throws: TributaryError.self) { try HistoryPayload.decodeChange(&damaged, names: ["counters"]) }
    }
}
