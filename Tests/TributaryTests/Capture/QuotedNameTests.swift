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

/// The names of adopted tables outside the adoption itself: a model file, a sort key, a
/// declared key, and the names a predicate could not carry.
@Suite struct QuotedNameModelTests {
    let dir = TemporaryDirectory()

    @Test func aModelWithNamesThatNeedQuotingPrintsAsYAMLThatReadsBack() throws {
        let path = dir.file("odd.db")
        try ForeignWriter.shell(path, #"""
            CREATE TABLE "a: b" ("id" INTEGER PRIMARY KEY, "x #y" TEXT, " z" TEXT, "k, l" TEXT, "[m]" TEXT, "true" TEXT, "- n" INTEGER);
            CREATE UNIQUE INDEX "by k, l" ON "a: b" ("k, l", " z");
            CREATE TABLE "{tags}" ("name" TEXT PRIMARY KEY, "say ""hi""" TEXT);
            """#)
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        let model = try #require(try Fixtures.adoptedCoordinator(path).persistentStores.first?.model)
        #expect(try ManagedObjectModel(yaml: model.yamlText) == model, "\(model.yamlText)")
        #expect(try model.requireEntity("a: b").uniquenessConstraints == [["k, l", " z"]])
    }

    @Test func aSortKeyTakesBacktickedNamesAndRefusesAnUnclosedOne() throws {
        #expect(try SortDescriptor(parsing: "`unit price`:desc") == SortDescriptor("unit price", ascending: false))
        #expect(try SortDescriptor(parsing: "`a:b`") == SortDescriptor("a:b"))
        #expect(try SortDescriptor(parsing: "post.`unit price`") == SortDescriptor("post.unit price"))
        #expect(try SortDescriptor(parsing: "title:ASC") == SortDescriptor("title"))
        let unclosed = try #require(throws: TributaryError.self) { try SortDescriptor(parsing: "`a:desc") }
        #expect(unclosed.message.contains("unterminated quoted name") && unclosed.hint?.contains("`unit price`:desc") == true)
        let direction = try #require(throws: TributaryError.self) { try SortDescriptor(parsing: "a:up") }
        #expect(direction.message.contains("unknown sort direction 'up'"))
    }

    @Test func namesAPredicateWouldMisreadAreRefused() throws {
        let path = dir.file("vars.db")
        try ForeignWriter.shell(path, #"CREATE TABLE t (id INTEGER PRIMARY KEY, "$amt" REAL); CREATE TABLE "@at" (id INTEGER PRIMARY KEY);"#)
        let error = try #require(throws: TributaryError.self) { try PersistentStoreCoordinator.adoptDatabase(at: path) }
        #expect(error.message.contains("'@at' has a name starting with $ or @") && error.message.contains("'t' has column '$amt', which has a name starting with $ or @"), "\(error.message)")
    }

    @Test func aDeclaredKeyNamingAnAttributeTwiceIsRefused() throws {
        var entity = EntityDescription(name: "users")
        entity.tableKey = "rowid"
        entity.attributes = [AttributeDescription(name: "email", type: .string)]
        entity.declaredKey = ["email", "email"]
        let error = try #require(throws: TributaryError.self) { try ManagedObjectModel(entities: [entity]) }
        #expect(error.message.contains("the declared key names an attribute twice") && error.location == "entity users", "\(error)")
    }
}

extension QuotedNameModelTests {
    /// SQLite folds the case of ASCII letters only, so `Ä` and `ä` are two tables to it and
    /// `É` and `é` two columns: one of each is refused with the `--exclude` that leaves it out.
    @Test func namesDifferingOnlyInCaseBeyondASCIIAreRefusedOneByOne() throws {
        let path = dir.file("case.db")
        try ForeignWriter.shell(path, #"CREATE TABLE "Ä" (id INTEGER PRIMARY KEY); CREATE TABLE "ä" (id INTEGER PRIMARY KEY); CREATE TABLE t (id INTEGER PRIMARY KEY, "É" TEXT, "é" TEXT);"#)
        let error = try #require(throws: TributaryError.self) { try PersistentStoreCoordinator.adoptDatabase(at: path) }
        #expect(error.message.contains("'ä' differs from 'Ä' only in case") && error.message.contains("'t'"), "\(error.message)")
        #expect(error.hint?.contains("--exclude 'ä'") == true && error.hint?.contains("--exclude t") == true, "\(error.hint ?? "")")
        let report = try PersistentStoreCoordinator.adoptDatabase(at: path, options: DatabaseAdoption(exclude: ["ä", "t"]))
        #expect(report.tables.map(\.name) == ["Ä"])
    }
}
