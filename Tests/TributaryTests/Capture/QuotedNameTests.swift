import Foundation
import Testing
@testable import Tributary
import TributaryTestSupport

/// An adopted table whose names need quoting in SQL, written through a context, fetched
/// with `%K` and backticks, and captured for the `sqlite3` shell and Python alike.
@Suite struct QuotedNameTests {
    let dir = TemporaryDirectory()
    var path: URL { dir.file("shop.db") }

    func adopted() throws -> (PersistentStoreCoordinator, PersistentHistoryToken?) {
        try ForeignWriter.shell(path, #"""
            CREATE TABLE "line items" ("item id" INTEGER PRIMARY KEY, "unit-price" REAL NOT NULL, "order" TEXT, "_note" TEXT);
            CREATE UNIQUE INDEX "line items by order" ON "line items" ("order");
            INSERT INTO "line items" VALUES (1, 2.5, 'a', NULL);
            """#)
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        let coordinator = try Fixtures.adoptedCoordinator(path)
        return (coordinator, try coordinator.currentPersistentHistoryToken())
    }

    func values(_ change: PersistentHistoryChange) -> String {
        change.properties.map { "\($0.name)=\($0.after?.storedText ?? "-")" }.sorted().joined(separator: " ")
    }

    @Test func aContextWritesAndFetchesByTheNamesTheTableHas() throws {
        let (coordinator, start) = try adopted()
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let item = try context.insertNewObject(forEntityName: "line items")
            item["unit-price"] = 4.0
            item["order"] = "b"
            item["_note"] = "rush"
            try context.save()
            let found = try context.fetch(FetchRequest(entityName: "line items", predicate: try StorePredicate(format: "%K > %@ AND `_note` != nil", "unit-price", 3.0)))
            #expect(found.map { $0["order"] as AttributeValue? } == [.string("b")])
            found[0]["unit-price"] = 4.5
            try context.save()
        }
        let changes = try coordinator.fetchHistory(.fetchHistory(after: start)).flatMap(\.changes)
        #expect(changes.map(\.changeType) == [.insert, .update])
        #expect(changes.first.map(values) == "_note=rush order=b unit-price=4.0", "\(changes)")
        #expect(changes.last?.updatedProperties.map(\.name) == ["unit-price"])
    }

    @Test func pythonsWritesAreCapturedUnderThoseNames() throws {
        let (coordinator, start) = try adopted()
        try ForeignWriter.python(path, #"""
            db.execute('INSERT OR REPLACE INTO "line items" ("unit-price", "order") VALUES (9.5, ?)', ('a',))
            db.commit()
            """#)
        let transactions = try coordinator.fetchHistory(.fetchHistory(after: start))
        let changes = transactions.flatMap(\.changes)
        #expect(transactions.count == 1 && changes.map(\.changeType) == [.delete, .insert], "the row REPLACE removed through the quoted index, then the new one")
        #expect(changes.first?.properties.first { $0.name == "unit-price" }?.before == .double(2.5))
        #expect(changes.last.map(values) == "_note=nil order=a unit-price=9.5", "\(changes)")
    }
}
