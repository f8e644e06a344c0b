import Foundation
import Testing
@testable import Tributary
import TributaryTestSupport

/// Values other programs stored that no Tributary write would: history records them as
/// Tributary reads them, so that every reader (fetches, streams, replay) agrees.
@Suite struct ForeignValueTests {
    let dir = TemporaryDirectory()
    var path: URL { dir.file("app.db") }

    /// Makes `schema` in a new database, adopts it, and opens it; with the token before any write.
    func adopt(_ schema: String) throws -> (PersistentStoreCoordinator, PersistentHistoryToken) {
        try Fixtures.adopted(path, schema: schema)
    }

    /// Before the fix, text in a BLOB column was recorded as text, which streams wrote as a
    /// string where a binary attribute's strings are base64: replay of `'text'` wrote the three
    /// bytes that base64 decodes to. Now it is its UTF-8 bytes, as fetches and the pre-update
    /// hook read it; an infinity stays one.
    @Test func textInABlobColumnIsItsBytesAndInfinitiesStay() throws {
        let (coordinator, start) = try adopt("CREATE TABLE f (id INTEGER PRIMARY KEY, data BLOB, r REAL);")
        try ForeignWriter.python(path, """
            db.execute("INSERT INTO f VALUES (1, 'text', ?)", (float('inf'),))
            db.execute("INSERT INTO f VALUES (2, x'74657874', ?)", (float('-inf'),))
            db.commit()
            """)
        let changes = try coordinator.fetchHistory(.fetchHistory(after: start)).flatMap(\.changes)
        let values = changes.map { ($0.insertedValues["data"], $0.insertedValues["r"]) }
        #expect(values.map(\.0) == [.data(Data("text".utf8)), .data(Data("text".utf8))])
        #expect(values.map(\.1) == [.double(.infinity), .double(-.infinity)])
        let fetched = try coordinator.fetch(FetchRequest(entityName: "f", sortDescriptors: [SortDescriptor("r", ascending: false)])).map { $0["data"] }
        #expect(fetched == values.map(\.0), "history and fetches agree")
    }

    /// Before the fix, text that is not valid UTF-8 was decoded (each bad sequence as U+FFFD)
    /// before the fold compared a row's values: an update from `x'ff'` to `x'fe'` read as no
    /// change, and the whole transaction was left out of history. Now the update is recorded,
    /// and in a `BLOB` column the bytes are the ones stored, not replacement characters.
    @Test func anUpdateBetweenTextsThatAreNotUTF8IsRecorded() throws {
        let (coordinator, start) = try adopt("CREATE TABLE ip (id INTEGER PRIMARY KEY, t TEXT, b BLOB);")
        try ForeignWriter.shell(path, "INSERT INTO ip VALUES (1, CAST(x'ff' AS TEXT), CAST(x'fffe' AS TEXT));")
        try ForeignWriter.shell(path, "UPDATE ip SET t = CAST(x'fe' AS TEXT), b = CAST(x'fe41' AS TEXT) WHERE id = 1;")
        let transactions = try coordinator.fetchHistory(.fetchHistory(after: start))
        #expect(transactions.count == 2)
        let update = try #require(transactions.last?.changes.first)
        #expect(update.changeType == .update)
        let t = try #require(update.properties.first { $0.name == "t" })
        #expect(t.before == .string("\u{FFFD}") && t.after == .string("\u{FFFD}"))
        let b = try #require(update.properties.first { $0.name == "b" })
        #expect(b.before == .data(Data([0xFF, 0xFE])) && b.after == .data(Data([0xFE, 0x41])))
    }

    /// Before the fix, another program's update of 1 to 1.0 in an untyped, a `BLOB` or a
    /// `STRICT` `ANY` column left no trace: the column's trigger compared with `IS NOT`, for
    /// which SQLite calls them equal, though the column keeps each as given and every reader
    /// shows them apart. The triggers compare storage classes too (under `trusted_schema=OFF`).
    @Test func aValueReplacedByAnEqualOneOfAnotherStorageClassIsRecorded() throws {
        let (coordinator, start) = try adopt("""
            CREATE TABLE loose (id INTEGER PRIMARY KEY, v, b BLOB);
            CREATE TABLE tight (id INTEGER PRIMARY KEY, a ANY) STRICT;
            INSERT INTO loose VALUES (1, 1, 2.0);
            INSERT INTO tight VALUES (1, 3);
            """)
        try ForeignWriter.shell(path, "PRAGMA trusted_schema = OFF; UPDATE loose SET v = 1.0, b = 2 WHERE id = 1; UPDATE tight SET a = 3.0 WHERE id = 1;")
        try ForeignWriter.shell(path, "UPDATE loose SET v = 1.0 WHERE id = 1;")
        let transactions = try coordinator.fetchHistory(.fetchHistory(after: start))
        #expect(transactions.count == 2, "the second update stores what was there: no change")
        let values = transactions.flatMap(\.changes).flatMap { change in change.properties.map { "\(change.changedObjectID.entityName).\($0.name): \($0.before.map { "\($0)" } ?? "-") → \($0.after.map { "\($0)" } ?? "-")" } }
        // The ANY column is adopted as an untyped one: its values are read as stored too.
        #expect(values.sorted() == ["loose.b: 2.0 → 2", "loose.v: 1 → 1.0", "tight.a: 3 → 3.0"])
    }

    /// Before the fix, an integer another program stored in a `NUMERIC` column (a double
    /// attribute) was recorded converted to a double: 9007199254740993 became ...992. A
    /// conversion to double now takes only integers a double holds exactly; history keeps
    /// the others as stored.
    @Test func integersADoubleCannotHoldAreRecordedAsStored() throws {
        #expect(AttributeValue.integer(9_007_199_254_740_993).coerced(to: .double) == nil)
        #expect(AttributeValue.integer(9_007_199_254_740_992).coerced(to: .double) == .double(9_007_199_254_740_992))
        let (coordinator, start) = try adopt("CREATE TABLE acct (id INTEGER PRIMARY KEY, balance NUMERIC);")
        try ForeignWriter.shell(path, "INSERT INTO acct VALUES (1, 9007199254740993), (2, 2.5), (3, 7);")
        let changes = try coordinator.fetchHistory(.fetchHistory(after: start)).flatMap(\.changes)
        #expect(changes.map { $0.insertedValues["balance"] } == [.integer(9_007_199_254_740_993), .double(2.5), .double(7)])
    }

    /// Before the fix, fetches (and so snapshots) read another program's 7 in a `BOOLEAN`
    /// column as true and 9007199254740993 in a `NUMERIC` one as ...992, while history kept
    /// them as stored: a snapshot and the history after it disagreed, and replay of the
    /// snapshot wrote 1 and ...992. Now every reader gives them as stored.
    @Test func fetchesSnapshotsAndHistoryGiveTheSameValues() throws {
        let (coordinator, start) = try adopt("CREATE TABLE acct (id INTEGER PRIMARY KEY, flag BOOLEAN, balance NUMERIC);")
        try ForeignWriter.shell(path, "INSERT INTO acct VALUES (1, 7, 9007199254740993), (2, 1, 2.5), (3, 0, 12);")
        let recorded = try coordinator.fetchHistory(.fetchHistory(after: start)).flatMap(\.changes).map { [$0.insertedValues["flag"], $0.insertedValues["balance"]] }
        let fetched = try coordinator.fetch(FetchRequest(entityName: "acct")).sorted { $0.objectID.primaryKey < $1.objectID.primaryKey }.map { [$0["flag"], $0["balance"]] }
        var snapshot: [[AttributeValue?]] = []
        try coordinator.enumerateSnapshot(begin: { _ in }) { object in
            snapshot.append(["flag", "balance"].map { name in object.properties.first { $0.name == name }?.after })
        }
        let expected: [[AttributeValue?]] = [[.integer(7), .integer(9_007_199_254_740_993)], [.bool(true), .double(2.5)], [.bool(false), .double(12)]]
        #expect(recorded == expected)
        #expect(fetched == expected)
        #expect(snapshot == expected)
    }

    /// Before the fix, Tributary's own writes read what other programs stored by the
    /// attribute's type: a delete's tombstone recorded 'abc' in an `INTEGER` column as 0, 7 in
    /// a `BOOLEAN` one as true and 'x' in a `REAL` one as 0.0, and fetches read a blob or 42
    /// in a `TEXT` or untyped column as text, where the capture of the insert had recorded
    /// them as stored. Now fetches, snapshots and every history entry give them as stored.
    @Test func tributarysOwnUpdatesAndDeletesRecordOtherProgramsValuesAsStored() throws {
        let (coordinator, start) = try adopt("CREATE TABLE v (id INTEGER PRIMARY KEY, n INTEGER, f BOOLEAN, r REAL, s TEXT, u, b BLOB);")
        try ForeignWriter.shell(path, "INSERT INTO v VALUES (1, 'abc', 7, 'x', x'00ff41', 42, 12), (2, x'01', 2.5, x'02', 'ok', 1.5, 'txt');")
        let names = ["n", "f", "r", "s", "u", "b"]
        let stored: [[AttributeValue?]] = [
            [.string("abc"), .integer(7), .string("x"), .data(Data([0, 0xFF, 0x41])), .integer(42), .integer(12)],
            [.data(Data([1])), .double(2.5), .data(Data([2])), .string("ok"), .double(1.5), .data(Data("txt".utf8))],
        ]
        let inserted = try coordinator.fetchHistory(.fetchHistory(after: start)).flatMap(\.changes).map { change in names.map { change.insertedValues[$0] } }
        let fetched = try coordinator.fetch(FetchRequest(entityName: "v")).sorted { $0.objectID.primaryKey < $1.objectID.primaryKey }.map { object in names.map { object[$0] } }
        var snapshot: [[AttributeValue?]] = []
        try coordinator.enumerateSnapshot(begin: { _ in }) { object in snapshot.append(names.map { name in object.properties.first { $0.name == name }?.after }) }
        #expect(inserted == stored)
        #expect(fetched == stored)
        #expect(snapshot == stored)

        var token = try coordinator.currentPersistentHistoryToken()
        try coordinator.execute(BatchUpdateRequest(entityName: "v", propertiesToUpdate: ["f": .bool(true)]))
        let updates = try coordinator.fetchHistory(.fetchHistory(after: token)).flatMap(\.changes)
        #expect(updates.map { $0.properties.first { $0.name == "f" }?.before } == [.integer(7), .double(2.5)])

        token = try coordinator.currentPersistentHistoryToken()
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let object = try #require(try context.fetch(FetchRequest(entityName: "v")).first { $0.objectID.primaryKey == 1 })
        object["u"] = .string("new")
        try context.save()
        let saved = try coordinator.fetchHistory(.fetchHistory(after: token)).flatMap(\.changes)
        #expect(saved.map { $0.properties.first { $0.name == "u" }?.before } == [.integer(42)])

        token = try coordinator.currentPersistentHistoryToken()
        try coordinator.execute(BatchDeleteRequest(entityName: "v"))
        let tombstones = try coordinator.fetchHistory(.fetchHistory(after: token)).flatMap(\.changes).map { change in names.map { change.tombstone[$0] } }
        #expect(tombstones == [
            [.string("abc"), .bool(true), .string("x"), .data(Data([0, 0xFF, 0x41])), .string("new"), .integer(12)],
            [.data(Data([1])), .bool(true), .data(Data([2])), .string("ok"), .double(1.5), .data(Data("txt".utf8))],
        ])
    }

    /// A `DATE` column is adopted as a string attribute, but its affinity is NUMERIC: text that
    /// looks like a number is stored as the number. A batch insert recorded the text it bound
    /// (review of the fix above) while fetches and tombstones give the number stored; now the
    /// insert's history reads such a column back from the row.
    @Test func aBatchInsertIntoAColumnThatStoresTextAsANumberRecordsTheNumber() throws {
        let (coordinator, start) = try adopt("CREATE TABLE e (id INTEGER PRIMARY KEY, d DATE, t TEXT);")
        #expect(coordinator.persistentStores[0].recorder.boundInserts, "the bound-insert path is the one under test")
        try coordinator.execute(BatchInsertRequest(entityName: "e", objects: [["d": .string("20240501"), "t": .string("20240501")], ["d": .string("2024-05-01"), "t": .string("1.50")]]))
        let stored: [[AttributeValue?]] = [[.integer(20_240_501), .string("20240501")], [.string("2024-05-01"), .string("1.50")]]
        let inserted = try coordinator.fetchHistory(.fetchHistory(after: start)).flatMap(\.changes).map { change in ["d", "t"].map { change.insertedValues[$0] } }
        let fetched = try coordinator.fetch(FetchRequest(entityName: "e")).sorted { $0.objectID.primaryKey < $1.objectID.primaryKey }.map { object in ["d", "t"].map { object[$0] } }
        #expect(fetched == stored)
        #expect(inserted == stored)
    }

    /// A read-only open cannot fold other programs' writes, so it refuses to rebuild rows as of
    /// a token from history that lacks them, rather than show them as past values.
    @Test func aReadOnlyOpenRefusesThePastWhileOtherProgramsWritesAreNotRead() throws {
        try ForeignWriter.shell(path, "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO items VALUES (1, 'a');")
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        let point = try Fixtures.adoptedCoordinator(path).currentPersistentHistoryToken()
        try ForeignWriter.shell(path, "UPDATE items SET name = 'changed' WHERE id = 1;")
        let readOnly = PersistentStoreCoordinator()
        let description = PersistentStoreDescription(url: path)
        description.isReadOnly = true
        try readOnly.addPersistentStore(with: description)
        let error = try #require(throws: TributaryError.self) { try readOnly.fetch(FetchRequest(entityName: "items"), asOf: point) }
        #expect(error.code == .readOnly && error.message.contains("other programs wrote"), "\(error)")
        let rows = try Fixtures.adoptedCoordinator(path).fetch(FetchRequest(entityName: "items"), asOf: point)
        #expect(rows.map { $0["name"] } == [.string("a")], "a read-write open folds first")
    }
}
