import Foundation
import Testing
@testable import Tributary

/// `NDJSONImporter` on real stores: upserts set relationships (recorded in history),
/// links are checked against the store, and the input is checked strictly, with
/// nothing written when a line is bad.
@Suite struct NDJSONImportTests {
    let directory = TemporaryDirectory()

    func blogStore(_ name: String = "blog.sqlite") throws -> PersistentStoreCoordinator {
        let description = PersistentStoreDescription(url: directory.file(name))
        description.persistentHistoryTracking = true
        return try Fixtures.blogCoordinator(description)
    }

    @discardableResult
    func importText(_ coordinator: PersistentStoreCoordinator, _ text: String, entity: String = "Post", batchSize: Int = 1000) throws -> BatchResult {
        try NDJSONImporter(coordinator: coordinator, entityName: entity, batchSize: batchSize, transaction: TransactionMetadata(author: "importer"))
            .importData(Data(text.utf8), displayName: "posts.ndjson")
    }

    func count(_ coordinator: PersistentStoreCoordinator, _ entity: String, _ format: String? = nil) throws -> Int {
        try coordinator.count(for: FetchRequest(entityName: entity, predicate: try format.map { try StorePredicate(format: $0) }))
    }

    func tags(_ coordinator: PersistentStoreCoordinator, _ names: [String]) throws -> [ObjectID] {
        var request = BatchInsertRequest(entityName: "Tag", objects: names.map { ["name": .string($0)] })
        request.resultType = .objectIDs
        return try coordinator.execute(request).objectIDs
    }

    func post(_ id: String, tags: [ObjectID]) -> String {
        let list = tags.map { "\"\($0.uriRepresentation)\"" }.joined(separator: ",")
        return #"{"externalID": "\#(id)", "title": "T", "createdAt": "2024-05-01T12:00:00Z", "tags": [\#(list)]}"# + "\n"
    }

    func expectError(_ body: () throws -> Void, _ contains: String..., sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            try body()
            Issue.record("no error; expected one containing \(contains)", sourceLocation: sourceLocation)
        } catch {
            for text in contains { #expect("\(error)".contains(text), "\(error)", sourceLocation: sourceLocation) }
        }
    }

    // MARK: Relationships on upserts

    @Test func reimportSetsToManyLinksAndHistoryRecordsThem() throws {
        let coordinator = try blogStore()
        let ids = try tags(coordinator, ["swift", "sqlite", "linux"])
        try importText(coordinator, post("p1", tags: [ids[0], ids[1]]))
        #expect(try count(coordinator, "Post", "ANY tags.name == 'swift'") == 1)
        let before = try coordinator.fetchHistory(.fetchHistory(after: nil)).last!.token

        let result = try importText(coordinator, post("p1", tags: [ids[1], ids[2]]))
        #expect(result.updated == 1 && result.inserted == 0)
        #expect(try count(coordinator, "Post", "ANY tags.name == 'swift'") == 0)
        #expect(try count(coordinator, "Post", "ANY tags.name == 'sqlite'") == 1)
        #expect(try count(coordinator, "Post", "ANY tags.name == 'linux'") == 1)
        let transactions = try coordinator.fetchHistory(.fetchHistory(after: before))
        #expect(transactions.count == 1)
        let change = try #require(transactions.first?.changes.first { $0.entityName == "Post" })
        let links = try #require(change.updatedProperties.first { $0.name == "tags" })
        #expect(links.added == [ids[2]])
        #expect(links.removed == [ids[0]])

        // An empty list (or null) removes every link.
        try importText(coordinator, post("p1", tags: []))
        #expect(try count(coordinator, "Post", "tags.@count > 0") == 0)
    }

    @Test func reimportSetsToManyKeptOnTheOtherSide() throws {
        let coordinator = try blogStore()
        var request = BatchInsertRequest(entityName: "Attachment", objects: [["fileName": "a"], ["fileName": "b"]])
        request.resultType = .objectIDs
        let attachments = try coordinator.execute(request).objectIDs
        let line = { (id: ObjectID) in #"{"externalID": "p1", "title": "T", "createdAt": 0, "attachments": ["\#(id.uriRepresentation)"]}"# + "\n" }
        try importText(coordinator, line(attachments[0]))
        try importText(coordinator, line(attachments[1]))
        #expect(try count(coordinator, "Attachment", "post == nil") == 1)
        #expect(try count(coordinator, "Attachment", "post.externalID == 'p1' AND fileName == 'b'") == 1)
    }

    @Test func reimportSetsToOneOnEitherSide() throws {
        let model = try ManagedObjectModel {
            Entity("Person") {
                Attribute("name", .string, optional: false).unique()
                Relationship("passport", to: "Passport", inverse: "owner")
            }
            Entity("Passport") {
                Attribute("number", .string, optional: false).unique()
                Relationship("owner", to: "Person", inverse: "passport")
            }
        }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let description = PersistentStoreDescription(url: directory.file("people.sqlite"))
        description.persistentHistoryTracking = true
        try coordinator.addPersistentStore(with: description)
        let store = try coordinator.requireStore()
        try importText(coordinator, #"{"number": "A"}"# + "\n" + #"{"number": "B"}"# + "\n", entity: "Passport")
        let a = store.objectID(entity: "Passport", primaryKey: 1).uriRepresentation
        let b = store.objectID(entity: "Passport", primaryKey: 2).uriRepresentation
        try importText(coordinator, #"{"name": "ann", "passport": "\#(a)"}"# + "\n", entity: "Person")
        #expect(try count(coordinator, "Passport", "owner.name == 'ann'") == 1)
        let result = try importText(coordinator, #"{"name": "ann", "passport": "\#(b)"}"# + "\n", entity: "Person")
        #expect(result.updated == 1)
        #expect(try count(coordinator, "Passport", "number == 'B' AND owner.name == 'ann'") == 1)
        #expect(try count(coordinator, "Passport", "number == 'A' AND owner == nil") == 1)
        // And from the other side.
        let ann = store.objectID(entity: "Person", primaryKey: 1).uriRepresentation
        try importText(coordinator, #"{"number": "A", "owner": "\#(ann)"}"# + "\n", entity: "Passport")
        #expect(try count(coordinator, "Person", "passport.number == 'A'") == 1)
        #expect(try count(coordinator, "Passport", "number == 'B' AND owner == nil") == 1)
    }

    // MARK: Links checked

    @Test func linksToMissingObjectsOrOtherStoresAreRefused() throws {
        let coordinator = try blogStore()
        let ids = try tags(coordinator, ["swift"])
        let missing = ObjectID(storeID: ids[0].storeID, entityName: "Tag", primaryKey: 99)
        expectError({ try importText(coordinator, post("p0", tags: []) + post("p1", tags: [ids[0], missing])) },
                    "posts.ndjson:2", "'tags' of Post links to \(missing.uriRepresentation), which does not exist")
        let foreign = ObjectID(storeID: UUID(), entityName: "Tag", primaryKey: 1)
        expectError({ try importText(coordinator, post("p1", tags: [foreign])) }, "posts.ndjson:1", "\(foreign.uriRepresentation), an object of another store")
        let wrongEntity = ObjectID(storeID: ids[0].storeID, entityName: "Post", primaryKey: 1)
        expectError({ try importText(coordinator, post("p1", tags: [wrongEntity])) }, "posts.ndjson:1", "which is not a Tag")
        #expect(try count(coordinator, "Post") == 0)
        let joinRows = try coordinator.requireStore().database.read { db in try db.scalar("SELECT count(*) FROM \"_Post_tags\"")?.integerValue }
        #expect(joinRows == 0)
    }

    // MARK: Strict input

    @Test func strictInputIsRefusedWithItsLine() throws {
        let coordinator = try blogStore()
        let good = #"{"externalID": "a", "title": "T", "createdAt": 0}"# + "\n"
        expectError({ try importText(coordinator, good + #"{"externalID": "b", "title": "T", "title": "U", "createdAt": 0}"# + "\n") },
                    "posts.ndjson:2", "the key 'title' appears twice")
        var invalid = Data(good.utf8)
        invalid.append(contentsOf: Array(#"{"externalID": "b", "title": "caf"#.utf8) + [0xE9] + Array(#"", "createdAt": 0}"#.utf8) + [0x0A])
        expectError({ try NDJSONImporter(coordinator: coordinator, entityName: "Post").importData(invalid, displayName: "posts.ndjson") },
                    "posts.ndjson:2", "invalid UTF-8")
        for bad in ["1e300", "-1e300", "1e400", "NaN", "\"NaN\"", "\"10000-01-01\""] {
            expectError({ try importText(coordinator, good + #"{"externalID": "b", "title": "T", "createdAt": \#(bad)}"# + "\n") }, "posts.ndjson:2")
        }
        expectError({ try importText(coordinator, good + #"{"externalID": "b", "title": "T", "createdAt": 1e300}"# + "\n") }, "outside the supported range")
        expectError({ try importText(coordinator, good + String(repeating: "[", count: 100_000) + "\n") }, "posts.ndjson:2", "expected a JSON object")
        expectError({ try importText(coordinator, good + "{\"externalID\": " + String(repeating: "[", count: 100_000) + "\n") }, "posts.ndjson:2", "malformed JSON")
        #expect(try count(coordinator, "Post") == 0)
    }

    @Test func crlfLineEndingsAndEscapesAreRead() throws {
        let coordinator = try blogStore()
        let text = #"{"externalID": "a", "title": "caf\u00e9 \"x\" \ud83d\ude00", "createdAt": "2024-05-01T12:00:00.250Z"}"# + "\r\n\r\n  \r\n"
            + #"{"externalID": "b", "title": "Zoë", "createdAt": 1714564800, "content": null}"# + "\r\n"
        let result = try importText(coordinator, text)
        #expect(result.inserted == 2)
        let rows = try coordinator.fetch(FetchRequest(entityName: "Post", sortDescriptors: [SortDescriptor("externalID")]))
        #expect(rows.map { $0["title"]?.stringValue } == ["café \"x\" 😀", "Zoë"])
        #expect(rows[0]["createdAt"] == .date(Date(timeIntervalSince1970: 1_714_564_800.25)))
        #expect(rows[1]["createdAt"] == .date(Date(timeIntervalSince1970: 1_714_564_800)))
    }

    // MARK: One transaction

    @Test func aBadLastLineWritesNothingAcrossManyBatches() throws {
        let coordinator = try blogStore()
        let lines = (0..<2_500).map { #"{"externalID": "e\#($0)", "title": "T", "createdAt": \#($0)}"# }.joined(separator: "\n")
        let tokenBefore = try coordinator.fetchHistory(.fetchHistory(after: nil)).last?.token
        expectError({ try importText(coordinator, lines + "\n" + #"{"externalID": "x"}"#, batchSize: 100) }, "posts.ndjson:2501", "'title' of Post is required")
        #expect(try count(coordinator, "Post") == 0)
        #expect(try coordinator.fetchHistory(.fetchHistory(after: nil)).last?.token == tokenBefore)

        // The same file without the bad line: every row, one history transaction per batch.
        let result = try importText(coordinator, lines + "\n", batchSize: 1000)
        #expect(result.inserted == 2_500)
        let history = try coordinator.fetchHistory(.fetchHistory(after: tokenBefore))
        #expect(history.map { $0.changes.count } == [1000, 1000, 500])
        #expect(history.allSatisfy { $0.author == "importer" })

        // Keys that change every line still end a history part every batch.
        let mixed = (0..<250).map { #"{"externalID": "m\#($0)", "title": "T", "createdAt": 0\#($0 % 2 == 0 ? "" : #", "content": "c""#)}"# }.joined(separator: "\n")
        let last = history.last?.token
        try importText(coordinator, mixed, batchSize: 100)
        #expect(try coordinator.fetchHistory(.fetchHistory(after: last)).map { $0.changes.count } == [100, 100, 50])
    }

    @Test func rowsGivingDifferentKeysAndLinksKeepTheirOrder() throws {
        let coordinator = try blogStore()
        let ids = try tags(coordinator, ["swift"])
        let text = #"{"externalID": "a", "title": "1", "createdAt": 0}"# + "\n"
            + #"{"externalID": "a", "title": "2", "createdAt": 0, "content": "c"}"# + "\n"
            + post("b", tags: [ids[0]])
            + #"{"externalID": "a", "title": "3", "createdAt": 0}"# + "\n"
        let result = try importText(coordinator, text)
        #expect(result.inserted == 2 && result.updated == 2)
        let rows = try coordinator.fetch(FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "externalID == 'a'")))
        #expect(rows.first?["title"]?.stringValue == "3")
        #expect(rows.first?["content"]?.stringValue == "c")
        #expect(try count(coordinator, "Post", "ANY tags.name == 'swift'") == 1)
    }
}
