import Foundation
import Testing
@testable import Tributary
import TributaryTestSupport

/// Tributary's own batch requests write `WITHOUT ROWID` tables the way another program's
/// statements do, with the stored triggers on (its pre-update hook cannot tell their rows
/// apart): the capture triggers number new keys and log the changes, and the transaction
/// folds them into its own history, under its own author, once, with the rowid tables'
/// changes beside them.
extension WithoutRowidTests {
    func insert(_ coordinator: PersistentStoreCoordinator, _ entity: String, _ objects: [[String: AttributeValue]],
                primaryKeys: [Int64] = [], author: String = "importer") throws -> BatchResult {
        var request = BatchInsertRequest(entityName: entity, objects: objects)
        request.primaryKeys = primaryKeys
        request.resultType = .objectIDs
        request.transaction = TransactionMetadata(author: author, contextName: "test")
        return try coordinator.execute(request)
    }

    @Test func aBatchInsertIsNumberedAndRecordedOnceUnderItsAuthor() throws {
        let (coordinator, start) = try adopted()
        let result = try insert(coordinator, "tags", [["name": .string("green"), "color": .string("#0f0")], ["name": .string("RED"), "color": .string("#e00")]])
        #expect(result.inserted == 1 && result.updated == 1, "RED meets red through the key's NOCASE: \(result)")
        let numbers = try numbers(coordinator, "tags", by: "name")
        let (green, red) = (try #require(numbers["green"]), try #require(numbers["RED"], "the upsert sets the key as given: \(numbers)"))
        #expect(result.objectIDs.map(\.primaryKey) == [green, red], "\(result.objectIDs) \(numbers)")
        let transactions = try coordinator.fetchHistory(.fetchHistory(after: start))
        #expect(transactions.count == 1 && transactions.first?.author == "importer" && transactions.first?.contextName == "test",
                "one transaction, Tributary's own: \(transactions.map { "\($0.processName) \($0.author ?? "-")" })")
        let changes = transactions.first?.changes ?? []
        #expect(summary(changes) == ["insert tags/p\(green) name=green", "update tags/p\(red) name=red"], "\(summary(changes))")
        #expect(property(changes.last, "color")?.before == .string("#f00") && property(changes.last, "color")?.after == .string("#e00"))
        #expect(property(changes.last, "name")?.before == .string("red") && property(changes.last, "name")?.after == .string("RED"))
        #expect(try ForeignWriter.shell(path, "SELECT name, color FROM tags ORDER BY name;") == "blue|#00f\ngreen|#0f0\nRED|#e00\n")
        // Another program's write to the row Tributary made goes on under the same number.
        try ForeignWriter.shell(path, "UPDATE tags SET color = 'lime' WHERE name = 'green';")
        #expect(summary(try coordinator.fetchHistoryChanges(.fetchHistory(after: start))).last == "update tags/p\(green) name=green")
    }

    /// A column's trigger compares as stored: before, `'red' IS NOT 'RED'` under the key's
    /// NOCASE was false, and another program's case-only change was not recorded.
    @Test func aCaseOnlyChangeOfANocaseColumnIsRecorded() throws {
        let (coordinator, start) = try adopted()
        try ForeignWriter.shell(path, "UPDATE tags SET name = 'BLUE' WHERE name = 'blue';")
        let changes = try coordinator.fetchHistoryChanges(.fetchHistory(after: start))
        #expect(changes.count == 1 && property(changes.first, "name")?.before == .string("blue") && property(changes.first, "name")?.after == .string("BLUE"),
                "\(summary(changes))")
    }

    @Test func aBatchUpdateOfTheKeyFollowsTheObjectAndADeleteLeavesATombstone() throws {
        let (coordinator, start) = try adopted()
        let before = try numbers(coordinator, "scores", by: "code")
        let (ann, bob) = (try #require(before["a1"]), try #require(before["b1"]))
        let updated = try coordinator.execute(BatchUpdateRequest(entityName: "scores", predicate: try StorePredicate(format: "player == 'ann'"),
                                                                 propertiesToUpdate: ["game": .integer(2), "points": .double(11)]))
        #expect(updated.updated == 1)
        #expect(try numbers(coordinator, "scores", by: "code") == before, "the key changed, the number stayed")
        let deleted = try coordinator.execute(BatchDeleteRequest(entityName: "scores", predicate: try StorePredicate(format: "code == 'b1'")))
        #expect(deleted.count == 1)
        let changes = try coordinator.fetchHistoryChanges(.fetchHistory(after: start))
        #expect(summary(changes) == ["update scores/p\(ann) game=1 player=ann", "delete scores/p\(bob) game=1 player=bob"], "\(summary(changes))")
        #expect(property(changes.first, "game")?.before == .integer(1) && property(changes.first, "game")?.after == .integer(2))
        #expect(property(changes.last, "points")?.before == .double(7), "a tombstone: \(changes.last?.properties ?? [])")
        #expect(try ForeignWriter.shell(path, "SELECT player, game, points FROM scores;") == "ann|2|11.0\n")
    }

    @Test func oneTransactionWritingBothKindsOfTableIsOneHistoryTransaction() throws {
        let (coordinator, start) = try adopted()
        let store = try #require(coordinator.persistentStores.first)
        _ = try store.write(TransactionMetadata(author: "both")) { db in
            var notes = try BatchInserter(store: store, entityName: "notes")
            _ = try notes.run([["body": .string("second")]], resultType: .count, on: db)
            var tags = try BatchInserter(store: store, entityName: "tags")
            _ = try tags.run([["name": .string("teal")]], resultType: .count, on: db)
            _ = try notes.run([["body": .string("third")]], resultType: .count, on: db)
        }
        let transactions = try coordinator.fetchHistory(.fetchHistory(after: start))
        #expect(transactions.count == 1 && transactions.first?.author == "both")
        #expect(Set(summary(transactions.first?.changes ?? []).map { $0.components(separatedBy: "/")[0] }) == ["insert notes", "insert tags"]
                && transactions.first?.changes.count == 3, "\(summary(transactions.first?.changes ?? []))")
    }

    /// What another program committed before stays its own transaction, first: Tributary's
    /// transaction folds only the log rows its own statements wrote.
    @Test func anotherProgramsWriteJustBeforeStaysItsOwnTransactionInCommitOrder() throws {
        let (coordinator, start) = try adopted()
        try ForeignWriter.shell(path, "UPDATE tags SET color = 'navy' WHERE name = 'blue';")
        _ = try coordinator.execute(BatchUpdateRequest(entityName: "tags", predicate: try StorePredicate(format: "name == 'blue'"), propertiesToUpdate: ["color": .string("sky")]))
        try ForeignWriter.shell(path, "UPDATE tags SET color = 'ink' WHERE name = 'blue';")
        let transactions = try coordinator.fetchHistory(.fetchHistory(after: start))
        let colors = transactions.map { transaction in transaction.changes.compactMap { property($0, "color")?.after?.storedText } }
        #expect(transactions.map(\.processName) == ["foreign", ProcessInfo.processInfo.processName, "foreign"] && colors == [["navy"], ["sky"], ["ink"]],
                "\(transactions.map(\.processName)) \(colors)")
    }

    /// Python and Tributary write the same table at once, each in its own transactions: every
    /// transaction is recorded once, whole, by its writer, and replaying history in token
    /// order gives the table as it is.
    @Test func pythonAndTributaryWritingTheTableAtOnceAreEachRecordedWhole() throws {
        let (coordinator, start) = try adopted()
        let python = try ForeignWriter.startPython(path, """
            for i in range(150):
                db.execute("INSERT INTO tags (name, color) VALUES (?, 'py')", ("py%d" % i,))
                db.execute("UPDATE tags SET color = ? WHERE name = 'red'", ("py%d" % i,))
                db.commit()
            print("done", flush=True)
            """)
        for i in 0..<150 {
            _ = try insert(coordinator, "tags", [["name": .string("tr\(i)"), "color": .string("tr")]])
            try coordinator.execute(BatchUpdateRequest(entityName: "tags", predicate: try StorePredicate(format: "name == 'blue'"), propertiesToUpdate: ["color": .string("tr\(i)")]))
        }
        _ = (python.standardOutput as! Pipe).fileHandleForReading.readDataToEndOfFile()
        python.waitUntilExit()
        #expect(python.terminationStatus == 0)
        let transactions = try coordinator.fetchHistory(.fetchHistory(after: start))
        let foreign = transactions.filter { $0.processName == "foreign" }, own = transactions.filter { $0.processName != "foreign" }
        #expect(foreign.count == 150 && foreign.allSatisfy { $0.changes.count == 2 }, "each Python transaction whole: \(foreign.map(\.changes.count))")
        #expect(own.count == 300 && own.allSatisfy { $0.changes.count == 1 } && own.filter { $0.author == "importer" }.count == 150, "\(own.count)")
        var colors: [Int64: String] = [:]
        for change in transactions.flatMap(\.changes) {
            if let after = property(change, "color")?.after { colors[change.changedObjectID.primaryKey] = after.storedText }
        }
        let rows = try coordinator.fetch(FetchRequest(entityName: "tags"))
        for row in rows where colors[row.objectID.primaryKey] != nil {
            #expect(row["color"]?.storedText == colors[row.objectID.primaryKey], "\(row["name"]?.storedText ?? "?") as history says")
        }
        #expect(rows.count == 302 && colors.count == 302, "every row inserted and both updated rows: \(rows.count) \(colors.count)")
    }

    @Test func aRolledBackWriteLeavesNoNumberNoLogAndNoHistory() throws {
        let (coordinator, start) = try adopted()
        let error = try #require(throws: TributaryError.self) {
            _ = try insert(coordinator, "scores", [["player": .string("cy"), "game": .integer(1), "code": .string("c1")],
                                                    ["player": .string("dee"), "game": .integer(1), "team": .string("x")]])
        }
        #expect(error.message.contains("team"), "the second row is refused after the first was written: \(error.message)")
        #expect(try coordinator.fetchHistory(.fetchHistory(after: start)).isEmpty)
        #expect(try ForeignWriter.shell(path, "SELECT count(*) FROM _tributary_keys_scores; SELECT count(*) FROM _tributary_capture_log WHERE t != 0;") == "2\n0\n")
        _ = try insert(coordinator, "notes", [["body": .string("after")]])
        #expect(summary(try coordinator.fetchHistoryChanges(.fetchHistory(after: start))) == ["insert notes/p2"], "the next transaction records only its own")
    }

    @Test func anUpsertMeetingAnotherUniqueColumnUpdatesThatRowAndMovesItsKey() throws {
        let (coordinator, start) = try adopted()
        let before = try numbers(coordinator, "scores", by: "code")
        let ann = try #require(before["a1"])
        let result = try insert(coordinator, "scores", [["player": .string("dee"), "game": .integer(3), "code": .string("a1")]])
        #expect(result.updated == 1 && result.inserted == 0 && result.objectIDs.map(\.primaryKey) == [ann], "\(result)")
        #expect(try numbers(coordinator, "scores", by: "code") == before)
        #expect(summary(try coordinator.fetchHistoryChanges(.fetchHistory(after: start))) == ["update scores/p\(ann) game=1 player=ann"])
    }

    @Test func aContextSavesItsObjectsAndGetsTheirNumbers() throws {
        let (coordinator, start) = try adopted()
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        context.transactionAuthor = "editor"
        let red = try #require(try context.fetch(FetchRequest(entityName: "tags", predicate: try StorePredicate(format: "name == 'red'"))).first)
        let blue = try #require(try context.fetch(FetchRequest(entityName: "tags", predicate: try StorePredicate(format: "name == 'blue'"))).first)
        red["color"] = .string("#e00")
        context.delete(blue)
        let teal = try context.insertNewObject(forEntityName: "tags")
        teal["name"] = .string("teal")
        let note = try context.insertNewObject(forEntityName: "notes")
        note["body"] = .string("beside")
        try context.save()
        let numbers = try numbers(coordinator, "tags", by: "name")
        #expect(!teal.objectID.isTemporaryID && teal.objectID.primaryKey == numbers["teal"], "\(teal.objectID) \(numbers)")
        let transactions = try coordinator.fetchHistory(.fetchHistory(after: start))
        #expect(transactions.count == 1 && transactions.first?.author == "editor")
        #expect(Set(summary(transactions.first?.changes ?? [])) == ["update tags/p\(red.objectID.primaryKey) name=red", "delete tags/p\(blue.objectID.primaryKey) name=blue",
                                                                   "insert tags/p\(teal.objectID.primaryKey) name=teal", "insert notes/p2"], "\(summary(transactions.first?.changes ?? []))")
        #expect(try ForeignWriter.shell(path, "SELECT name || ':' || ifnull(color, '-') FROM tags ORDER BY name;") == "red:#e00\nteal:-\n")
    }

    /// A duplicate declared key fails with SQLite's primary-key constraint, not a unique one:
    /// the save's merge policy resolves it as for any unique constraint.
    @Test func aSavedObjectWithAKeyInUseMeetsTheMergePolicy() throws {
        let (coordinator, start) = try adopted()
        let refused = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try refused.insertNewObject(forEntityName: "tags")["name"] = .string("RED")
        #expect(throws: MergeConflictError.self) { try refused.save() }
        let merging = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        merging.mergePolicy = .mergeByPropertyObjectTrump
        let tag = try merging.insertNewObject(forEntityName: "tags")
        tag["name"] = .string("red")
        tag["color"] = .string("#d00")
        try merging.save()
        let red = try #require(try numbers(coordinator, "tags", by: "name")["red"])
        #expect(tag.objectID.primaryKey == red, "the object is the row that had the key: \(tag.objectID)")
        #expect(summary(try coordinator.fetchHistoryChanges(.fetchHistory(after: start))) == ["update tags/p\(red) name=red"])
        #expect(try ForeignWriter.shell(path, "SELECT color FROM tags WHERE name = 'red';") == "#d00\n")
    }

    /// A replica's insert meets only the row with its key: a new key whose unique column
    /// another row holds fails, rather than update that row and lose the stream's number.
    @Test func aReplicasInsertMeetingAnotherUniqueColumnFails() throws {
        let (coordinator, _) = try adopted()
        let before = try numbers(coordinator, "scores", by: "code")
        let error = try #require(throws: TributaryError.self) {
            _ = try insert(coordinator, "scores", [["player": .string("eve"), "game": .integer(9), "code": .string("a1")]], primaryKeys: [99])
        }
        #expect(error.code == .uniqueConstraint, "\(error.message)")
        #expect(try numbers(coordinator, "scores", by: "code") == before)
        #expect(try ForeignWriter.shell(path, "SELECT count(*) FROM _tributary_keys_scores WHERE _tributary_id = 99;") == "0\n")
    }

    @Test func objectsFromADictionaryHandlerAreNumbered() throws {
        let (coordinator, start) = try adopted()
        var names = ["cyan", "plum"]
        let result = try coordinator.execute(BatchInsertRequest(entityName: "tags", objects: [])) { object in
            guard let name = names.popLast() else { return true }
            object = ["name": .string(name)]
            return false
        }
        #expect(result.inserted == 2)
        let numbers = try numbers(coordinator, "tags", by: "name")
        #expect(Set(summary(try coordinator.fetchHistoryChanges(.fetchHistory(after: start)))) == Set(["plum", "cyan"].map { "insert tags/p\(numbers[$0] ?? 0) name=\($0)" }))
    }

    /// Only writes that may change a `WITHOUT ROWID` table's rows pay for the triggers.
    @Test func onlyTablesWhoseWritesMayReachOneRunThroughTheTriggers() throws {
        try ForeignWriter.shell(path, """
            CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT);
            CREATE TABLE orders (id INTEGER PRIMARY KEY, user_id INTEGER REFERENCES users (id) ON DELETE CASCADE);
            CREATE TABLE memos (code TEXT PRIMARY KEY, owner_id INTEGER REFERENCES users (id)) WITHOUT ROWID;
            CREATE TABLE plain (id INTEGER PRIMARY KEY, body TEXT);
            """)
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        let schema = try #require(try Fixtures.adoptedCoordinator(path).persistentStores.first).schema
        let reaching = schema.tables.values.filter(\.reachesWithoutRowid).map(\.name).sorted()
        #expect(reaching == ["memos", "users"], "users holds memos' links; orders and plain do not reach them: \(reaching)")
    }

    /// Keys at the edges: a missing or NULL key is refused with one line and writes nothing;
    /// an empty text key, a 100,000-character one and a number at Int64's end are numbered.
    @Test func keysAtTheEdgesAreNumberedOrRefusedWithOneLine() throws {
        let (coordinator, start) = try adopted()
        for objects in [[["color": AttributeValue.string("x")]], [["name": .null]]] {
            let error = try #require(throws: TributaryError.self) { _ = try insert(coordinator, "tags", objects) }
            #expect(error.code == .missingValue && error.message.contains("'name' of tags is required"), "\(error.message)")
        }
        #expect(try coordinator.fetchHistory(.fetchHistory(after: start)).isEmpty)
        let long = String(repeating: "z", count: 100_000)
        for name in ["", long] {
            let result = try insert(coordinator, "tags", [["name": .string(name)]])
            let numbered = try numbers(coordinator, "tags", by: "name")[name]
            #expect(result.inserted == 1 && numbered == result.objectIDs.first?.primaryKey)
        }
        let far = try insert(coordinator, "events", [["id": .integer(-5), "what": .string("far")]], primaryKeys: [Int64.max])
        #expect(far.objectIDs.map(\.primaryKey) == [Int64.max])
        let keys = try coordinator.fetchHistoryChanges(.fetchHistory(after: start)).map { $0.key.first?.value }
        #expect(keys == [.string(""), .string(long), .integer(-5)], "history names each row by its key")
    }

    /// No write path of Tributary's writes through the view; one that did would get one line.
    @Test func aWriteThatReachesTheViewIsSaidInOneLine() throws {
        let (coordinator, start) = try adopted()
        let store = try #require(coordinator.persistentStores.first)
        let error = try #require(throws: TributaryError.self) {
            try store.write { db in try db.execute("UPDATE tags SET color = 'x'") }
        }
        #expect(error.message == "'tags' is a WITHOUT ROWID table, which Tributary writes past its view, and this write reached the view", "\(error.message)")
        #expect(try coordinator.fetchHistory(.fetchHistory(after: start)).isEmpty)
    }

    @Test func aReplicaTakesTheSourcesNumbersAndRefusesNumbersItGaveOtherwise() throws {
        let (source, _) = try adopted()
        let numbers = try numbers(source, "tags", by: "name")
        let replica = dir.file("replica.db")
        try ForeignWriter.shell(replica, "CREATE TABLE tags (name TEXT COLLATE NOCASE PRIMARY KEY, color TEXT, data BLOB) WITHOUT ROWID;")
        _ = try PersistentStoreCoordinator.adoptDatabase(at: replica)
        let target = try Fixtures.adoptedCoordinator(replica)
        let keys = [try #require(numbers["blue"]), try #require(numbers["red"])]
        _ = try insert(target, "tags", [["name": .string("blue"), "color": .string("#00f")], ["name": .string("red"), "color": .string("#f00")]], primaryKeys: keys)
        #expect(try self.numbers(target, "tags", by: "name") == numbers)
        let error = try #require(throws: TributaryError.self) {
            _ = try insert(target, "tags", [["name": .string("red")]], primaryKeys: [keys[0]])
        }
        #expect(error.message.contains("tags/p\(keys[0]) cannot take its number here"), "\(error.message)")
    }
}
