import Foundation
import Testing
@testable import Tributary

@Suite struct HistoryTests {
    let coordinator: PersistentStoreCoordinator

    init() throws {
        let description = PersistentStoreDescription.inMemory()
        description.persistentHistoryTracking = true
        coordinator = try Fixtures.blogCoordinator(description)
    }

    func insert(_ entity: String, _ objects: [[String: AttributeValue]], author: String? = nil) throws -> [ObjectID] {
        var request = BatchInsertRequest(entityName: entity, objects: objects)
        request.resultType = .objectIDs
        request.transaction = TransactionMetadata(author: author, contextName: "tests")
        return try coordinator.execute(request).objectIDs
    }

    func post(_ i: Int, tags: [ObjectID] = []) -> [String: AttributeValue] {
        var values: [String: AttributeValue] = ["externalID": .string("ext-\(i)"), "title": .string("Post \(i)"), "createdAt": .date(Date(timeIntervalSince1970: Double(i)))]
        if !tags.isEmpty { values["tags"] = .array(tags.map { .objectID($0) }) }
        return values
    }

    func lastTransaction() throws -> PersistentHistoryTransaction {
        try #require(try coordinator.fetchHistory(.fetchHistory(after: nil)).last)
    }

    @Test func batchInsertRecordsInsertsWithValuesAndMembership() throws {
        let tags = try insert("Tag", [["name": "swift"]], author: "importer")
        let tagTransaction = try lastTransaction()
        #expect(tagTransaction.author == "importer")
        #expect(tagTransaction.contextName == "tests")
        #expect(tagTransaction.processID == getpid())
        #expect(tagTransaction.changes.map(\.changeType) == [.insert])
        #expect(tagTransaction.changes[0].insertedValues == ["name": "swift", "color": "gray", "postCount": 0])

        let posts = try insert("Post", [post(1, tags: tags)], author: "importer")
        let transaction = try lastTransaction()
        #expect(transaction.token > tagTransaction.token)
        let postChange = try #require(transaction.changes.first { $0.entityName == "Post" })
        #expect(postChange.changeType == .insert)
        #expect(postChange.changedObjectID == posts[0])
        #expect(postChange.insertedValues["title"] == "Post 1")
        #expect(postChange.insertedValues["createdAt"] == .date(Date(timeIntervalSince1970: 1)))
        #expect(postChange.properties.first { $0.name == "tags" }?.added == tags)
        // The tag's side of the membership is an update of its posts.
        let tagChange = try #require(transaction.changes.first { $0.entityName == "Tag" })
        #expect(tagChange.changeType == .update)
        // With it, the derived count the store maintains (Tag.postCount = posts.@count).
        #expect(tagChange.updatedProperties.map(\.name) == ["posts", "postCount"])
        #expect(tagChange.updatedProperties[0].added == posts)
        #expect(tagChange.updatedProperties[1] == PropertyChange(name: "postCount", before: 0, after: 1))
    }

    @Test func upsertAndBatchUpdateRecordBeforeAndAfter() throws {
        _ = try insert("Post", [post(1), post(2)])
        _ = try insert("Post", [["externalID": "ext-1", "title": "Renamed", "createdAt": .date(Date(timeIntervalSince1970: 1))]])
        let upsert = try lastTransaction()
        #expect(upsert.changes.count == 1)
        #expect(upsert.changes[0].changeType == .update)
        #expect(Self.withoutUpdatedAt(upsert.changes[0]) == [PropertyChange(name: "title", before: "Post 1", after: "Renamed")])

        var update = BatchUpdateRequest(entityName: "Post", propertiesToUpdate: ["content": "new"])
        update.transaction = TransactionMetadata(author: "editor")
        try coordinator.execute(update)
        let updated = try lastTransaction()
        #expect(updated.author == "editor")
        #expect(updated.changes.count == 2)
        #expect(updated.changes.allSatisfy { Self.withoutUpdatedAt($0) == [PropertyChange(name: "content", before: .null, after: "new")] })
    }

    /// A change's updated properties but Post.updatedAt (= now()), checking that one
    /// moved forward. It has SQLite's millisecond resolution, so two writes within
    /// the same millisecond leave it equal, and then history has no change of it.
    static func withoutUpdatedAt(_ change: PersistentHistoryChange, sourceLocation: SourceLocation = #_sourceLocation) -> [PropertyChange] {
        if let time = change.updatedProperties.first(where: { $0.name == "updatedAt" }) {
            if case .date(let before)? = time.before, case .date(let after)? = time.after {
                #expect(after > before, sourceLocation: sourceLocation)
            } else {
                Issue.record("updatedAt changed from \(String(describing: time.before)) to \(String(describing: time.after))", sourceLocation: sourceLocation)
            }
        }
        return change.updatedProperties.filter { $0.name != "updatedAt" }
    }

    @Test func cascadeDeleteRecordsTombstonesAndExcludedValues() throws {
        let posts = try insert("Post", [post(1)])
        let images = try insert("ImageData", [["bytes": .data(Data([1, 2, 3])), "width": 10]])
        let attachments = try insert("Attachment", [["fileName": "a.png", "post": .objectID(posts[0]), "imageData": .objectID(images[0])]])
        try coordinator.execute(BatchDeleteRequest(entityName: "Post"))
        let transaction = try lastTransaction()
        let deletes = transaction.changes.filter { $0.changeType == .delete }
        #expect(Set(deletes.map(\.changedObjectID)) == Set([posts[0], images[0], attachments[0]]))
        let attachment = try #require(deletes.first { $0.entityName == "Attachment" })
        #expect(attachment.tombstone["fileName"] == "a.png")
        #expect(attachment.tombstone["post"] == .objectID(posts[0]))
        let image = try #require(deletes.first { $0.entityName == "ImageData" })
        #expect(image.tombstone["width"] == 10)
        let bytes = try #require(image.properties.first { $0.name == "bytes" })
        #expect(bytes.isValueExcluded)
        #expect(bytes.before == nil)
    }

    @Test func removingAMembershipIsRecordedOnBothSides() throws {
        let tags = try insert("Tag", [["name": "a"], ["name": "b"]])
        let posts = try insert("Post", [post(1, tags: tags)])
        try coordinator.execute(BatchDeleteRequest(entityName: "Tag", predicate: try StorePredicate(format: "name == 'a'")))
        let transaction = try lastTransaction()
        let postChange = try #require(transaction.changes.first { $0.changedObjectID == posts[0] })
        #expect(postChange.changeType == .update)
        #expect(postChange.updatedProperties[0].name == "tags")
        #expect(postChange.updatedProperties[0].removed == [tags[0]])
        #expect(transaction.changes.contains { $0.changedObjectID == tags[0] && $0.changeType == .delete })
    }

    @Test func aFailedWriteLeavesNoHistory() throws {
        _ = try insert("Post", [post(1)])
        let before = try coordinator.currentPersistentHistoryToken()
        #expect(throws: TributaryError.self) { try coordinator.execute(BatchInsertRequest(entityName: "Post", objects: [post(2), ["externalID": "x"]])) }
        #expect(try coordinator.currentPersistentHistoryToken() == before)
        // The recorder forgot the failed batch: the next transaction has only its own change.
        _ = try insert("Post", [post(3)])
        #expect(try lastTransaction().changes.count == 1)
    }

    @Test func tokensCompareParseAndBelongToOneStore() throws {
        _ = try insert("Tag", [["name": "a"]])
        let token = try coordinator.currentPersistentHistoryToken()
        #expect(try PersistentHistoryToken(parsing: token.description) == token)
        let data = try JSONEncoder().encode(token)
        #expect(try JSONDecoder().decode(PersistentHistoryToken.self, from: data) == token)
        #expect(throws: TributaryError.self) { try PersistentHistoryToken(parsing: "abc") }
        let other = PersistentStoreDescription.inMemory()
        other.persistentHistoryTracking = true
        let second = try Fixtures.blogCoordinator(other)
        let error = try #require(throws: TributaryError.self) { try second.fetchHistory(.fetchHistory(after: token)) }
        #expect(error.message.contains("belongs to another store"))
    }

    @Test func filtersCombine() throws {
        let tags = try insert("Tag", [["name": "a"]], author: "importer")
        _ = try insert("Post", [post(1, tags: tags)], author: "importer")
        _ = try insert("Post", [post(2)], author: "app")
        try coordinator.execute(BatchDeleteRequest(entityName: "Post", predicate: try StorePredicate(format: "externalID == 'ext-2'")))
        var filter = HistoryFilter()
        filter.authors = ["importer"]
        filter.entities = ["Post"]
        let importerPosts = try coordinator.fetchHistory(.fetchHistory(withFilter: filter))
        #expect(importerPosts.count == 1)
        #expect(importerPosts[0].changes.map(\.entityName) == ["Post"])
        filter = HistoryFilter()
        filter.excludedAuthors = ["importer"]
        #expect(try coordinator.fetchHistory(.fetchHistory(withFilter: filter)).count == 2)  // app's insert and the unauthored delete
        filter.changeTypes = [.delete]
        #expect(try coordinator.fetchHistoryChanges(.fetchHistory(withFilter: filter)).map(\.changeType) == [.delete])
        filter = HistoryFilter()
        filter.authors = ["nobody"]
        #expect(try coordinator.fetchHistory(.fetchHistory(withFilter: filter)).isEmpty)
        filter = HistoryFilter()
        filter.entities = ["Nope"]
        #expect(try coordinator.fetchHistory(.fetchHistory(withFilter: filter)).isEmpty)
        let all = try coordinator.fetchHistory(.fetchHistory(after: nil))
        filter = HistoryFilter()
        filter.after = all[0].token
        filter.through = all[2].token
        #expect(try coordinator.fetchHistory(.fetchHistory(withFilter: filter)).map(\.token) == [all[1].token, all[2].token])
        #expect(try coordinator.countHistory(.fetchHistory(withFilter: filter)) == 2)
    }

    /// The token range is a primary-key search; authors are looked up by index among the
    /// sources and checked on each transaction of the range (no index per source: it cost a
    /// page write per commit).
    @Test func authorAndTokenFiltersReadOnlyTheTokenRange() throws {
        let store = try coordinator.requireStore()
        var filter = HistoryFilter()
        filter.authors = ["importer"]
        filter.after = PersistentHistoryToken(value: 1, storeID: store.identifier)
        let query = try HistoryQuery(filter, storeID: store.identifier)
        let plan = try store.database.read { db -> String in
            let statement = try db.makeStatement("EXPLAIN QUERY PLAN SELECT token FROM \(HistorySchema.transactions)\(query.whereSQL) ORDER BY token")
            try statement.bind(query.arguments)
            var lines: [String] = []
            while try statement.step() { lines.append(statement.string(at: 3)) }
            return lines.joined(separator: "\n")
        }
        #expect(plan.contains("SEARCH _tributary_history USING INTEGER PRIMARY KEY (rowid>?)"), "\(plan)")
        #expect(plan.contains("_tributary_history_source_author (author=?)"), "\(plan)")
        #expect(!plan.contains("SCAN _tributary_history"), "\(plan)")
    }

    @Test func consumersHoldBackPruningAndExpire() throws {
        _ = try insert("Tag", [["name": "t0"]])
        try coordinator.registerHistoryConsumer("slow", startingAt: .oldest)
        try coordinator.registerHistoryConsumer("fast", startingAt: .oldest)
        for i in 1...4 { _ = try insert("Tag", [["name": .string("t\(i)")]]) }
        let all = try coordinator.fetchHistory(.fetchHistory(after: nil))
        #expect(all.count == 5)
        try coordinator.commitHistoryConsumer("fast", through: all[3].token)
        try coordinator.commitHistoryConsumer("slow", through: all[1].token)
        let pruned = try coordinator.deleteHistory(.deleteConsumedHistory())
        #expect(pruned.transactions == 2)
        #expect(try coordinator.fetchHistory(.fetchHistory(after: nil)).map(\.token) == Array(all[2...].map(\.token)))
        // The slow consumer still reads everything after its position.
        #expect(try coordinator.fetchHistory(.fetchHistory(after: all[1].token)).count == 3)
        let consumers = try coordinator.historyConsumers()
        #expect(consumers.map(\.name) == ["fast", "slow"])
        #expect(consumers.map(\.lagTransactions) == [1, 3])
        #expect(consumers.allSatisfy { $0.state == .current })

        // A retention bound prunes past the slow consumer, which then expires.
        let forced = try coordinator.deleteHistory(.deleteHistory(before: all[3].token))
        #expect(forced.transactions == 2)
        #expect(try coordinator.historyConsumer(named: "slow").state == .expired)
        let error = try #require(throws: TributaryError.self) { try coordinator.fetchHistory(.fetchHistory(after: all[1].token)) }
        #expect(error.code == .historyExpired)
        #expect(error.message.contains("oldest token still kept is \(all[3].token)"))
        #expect(error.hint?.contains("snapshot") == true)
        // Pruning with nothing to prune is fine.
        #expect(try coordinator.deleteHistory(.deleteHistory(before: all[0].token)).transactions == 0)
    }

    @Test func unknownConsumerAndUntrackedStore() throws {
        let error = try #require(throws: TributaryError.self) { try coordinator.commitHistoryConsumer("ghost", through: coordinator.currentPersistentHistoryToken()) }
        #expect(error.code == .unknownConsumer)
        let plain = try Fixtures.blogCoordinator(.inMemory())
        let untracked = try #require(throws: TributaryError.self) { try plain.fetchHistory(.fetchHistory(after: nil)) }
        #expect(untracked.code == .historyNotTracked)
        #expect(untracked.hint?.contains("persistentHistoryTracking") == true)
    }

    @Test func trackingIsKeptOnceAStoreHasHistory() throws {
        let dir = TemporaryDirectory()
        let description = PersistentStoreDescription(url: dir.file("h.sqlite"))
        description.persistentHistoryTracking = true
        let first = try Fixtures.blogCoordinator(description)
        _ = first
        // A coordinator opening it without the option still records, so nothing is missed.
        let second = try Fixtures.blogCoordinator(PersistentStoreDescription(url: dir.file("h.sqlite")))
        try second.execute(BatchInsertRequest(entityName: "Tag", objects: [["name": "x"]]))
        #expect(try first.fetchHistory(.fetchHistory(after: nil)).count == 1)
    }

    @Test func historyStreamsInBatches() throws {
        for i in 0..<12 { _ = try insert("Tag", [["name": .string("t\(i)")]]) }
        var request = PersistentHistoryChangeRequest.fetchHistory(after: nil)
        request.fetchBatchSize = 5
        var sizes: [Int] = []
        try coordinator.enumerateHistory(request) { sizes.append($0.count) }
        #expect(sizes == [5, 5, 2])
    }

    @Test func changeCursorAgreesWithFetchedChanges() throws {
        let tags = try insert("Tag", [["name": "a"], ["name": "b"]], author: "importer")
        _ = try insert("Post", [post(1, tags: tags), post(2)], author: "importer")
        try coordinator.execute(BatchUpdateRequest(entityName: "Post", predicate: try StorePredicate(format: "externalID == 'ext-1'"), propertiesToUpdate: ["title": "Renamed"]))
        try coordinator.execute(BatchDeleteRequest(entityName: "Tag", predicate: try StorePredicate(format: "name == 'b'")))
        for filter in [HistoryFilter(), { var f = HistoryFilter(); f.entities = ["Post"]; f.changeTypes = [.update]; return f }(), { var f = HistoryFilter(); f.authors = ["importer"]; return f }()] {
            let request = PersistentHistoryChangeRequest.fetchHistory(withFilter: filter)
            var viewed: [PersistentHistoryChange] = []
            try coordinator.enumerateHistoryChanges(request) { change in viewed.append(try change.copy()) }
            #expect(viewed == (try coordinator.fetchHistoryChanges(request)))
            #expect(!viewed.isEmpty)
        }
        var renamed: [String: AttributeValue?] = [:]
        try coordinator.enumerateHistoryChanges(.fetchHistory(after: nil)) { change in
            guard change.changeType == .update, change.entityName == "Post" else { return }
            #expect(change.author == nil)
            try change.forEachProperty { name, before, after in
                if name == "title" { renamed["before"] = before; renamed["after"] = after }
            }
        }
        #expect(renamed["before"] == .some(.string("Post 1")))
        #expect(renamed["after"] == .some(.string("Renamed")))
    }
}
