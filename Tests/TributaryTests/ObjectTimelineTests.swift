import Foundation
import Testing
@testable import Tributary
import TributaryTestSupport

/// The object timeline index (issue 24): an object's history read through the index is
/// exactly what a scan of every transaction finds, for every kind of write (batches,
/// contexts, deletes, other programs' writes, keys on block edges and below zero); pruning
/// takes its rows; an older store gets it on upgrade; a store made without it still answers.
@Suite struct ObjectTimelineTests {
    let dir = TemporaryDirectory()
    var path: URL { dir.file("blog.sqlite") }

    func open(objectIndex: Bool = true) throws -> PersistentStoreCoordinator {
        let description = PersistentStoreDescription(url: path)
        description.persistentHistoryTracking = true
        description.historyObjectIndex = objectIndex
        return try Fixtures.blogCoordinator(description)
    }

    @discardableResult
    func shell(_ sql: String) throws -> String { try ForeignWriter.shell(path, sql) }

    /// The tokens of `object`'s transactions, through the history filter.
    func timeline(_ coordinator: PersistentStoreCoordinator, _ object: ObjectID) throws -> [Int64] {
        var filter = HistoryFilter()
        filter.objectIDs = [object]
        let transactions = try coordinator.fetchHistory(.fetchHistory(withFilter: filter))
        #expect(transactions.allSatisfy { $0.changes.allSatisfy { $0.changedObjectID == object } })
        return transactions.map(\.token.value)
    }

    /// The same, found by reading every transaction.
    func scanned(_ coordinator: PersistentStoreCoordinator, _ object: ObjectID) throws -> [Int64] {
        try coordinator.fetchHistory(.fetchHistory(after: nil))
            .filter { $0.changes.contains { $0.changedObjectID == object } }.map(\.token.value)
    }

    /// Posts 0..<140 in one batch (three blocks), then edits, a delete and shell writes.
    func writeHistory(_ coordinator: PersistentStoreCoordinator) throws -> [ObjectID] {
        let (_, posts) = try Fixtures.seedBlog(coordinator, posts: 140)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        for round in 0..<3 {
            try context.performAndWait {
                for index in [0, 63, 64, 65, 127 - round] {
                    try context.existingObject(with: posts[index]).setValue(.string("Round \(round)"), forKey: "title")
                }
                try context.save()
            }
        }
        try context.performAndWait {
            context.delete(try context.existingObject(with: posts[64]))
            try context.save()
        }
        try shell("""
            UPDATE Post SET title = 'shell' WHERE _pk IN (\(posts[63].primaryKey), \(posts[100].primaryKey));
            INSERT INTO Post (_pk, title, externalID, createdAt) VALUES (-1, 'below zero', 'neg-1', 0), (-64, 'further', 'neg-64', 0), (-65, 'next block', 'neg-65', 0);
            UPDATE Post SET title = 'again' WHERE _pk = -1;
            """)
        return posts
    }

    /// The token through which the index's rows are written.
    func indexedThrough() throws -> Int64 {
        Int64(try shell("SELECT value FROM _tributary_metadata WHERE key = 'historyObjectIndexThrough';").trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// Moves the index's flushed point past every token, so that a lookup reads the index's rows
    /// only, and none of the transactions after the point. (Without the point a lookup reads
    /// every transaction: a missing row would go unseen.)
    func onlyTheIndexAnswers() throws {
        try shell("UPDATE _tributary_metadata SET value = '1000000000000' WHERE key = 'historyObjectIndexThrough';")
    }

    /// Commits single-tag transactions until the index's rows are written through today's newest token.
    func flushIndex(_ coordinator: PersistentStoreCoordinator) throws {
        let newest = try coordinator.currentPersistentHistoryToken().value
        var n = 0
        while try indexedThrough() < newest {
            try coordinator.execute(BatchInsertRequest(entityName: "Tag", objects: [["name": .string("flush-\(newest)-\(n)")]]))
            n += 1
        }
    }

    func objects(_ posts: [ObjectID]) -> [ObjectID] {
        let negative = [-1, -64, -65].map { ObjectID(storeID: posts[0].storeID, entityName: "Post", primaryKey: Int64($0)) }
        return [0, 1, 62, 63, 64, 65, 100, 126, 127, 139].map { posts[$0] } + negative
    }

    @Test func theTimelineIsExactlyTheObjectsTransactions() throws {
        let coordinator = try open()
        let posts = try writeHistory(coordinator)
        for object in objects(posts) {
            let expected = try scanned(coordinator, object)
            #expect(!expected.isEmpty)
            #expect(try timeline(coordinator, object) == expected, "\(object)")
        }
        // Several objects at once, with another filter.
        var filter = HistoryFilter()
        filter.objectIDs = [posts[0], posts[64]]
        filter.after = PersistentHistoryToken(value: 2, storeKey: PersistentHistoryToken.key(of: posts[0].storeID))
        let both = try coordinator.fetchHistory(.fetchHistory(withFilter: filter)).map(\.token.value)
        #expect(both == Set(try scanned(coordinator, posts[0]) + scanned(coordinator, posts[64])).filter { $0 > 2 }.sorted())
    }

    @Test func aFilterOnAThousandObjectsIsAnswered() throws {
        let coordinator = try open()
        let (_, posts) = try Fixtures.seedBlog(coordinator, posts: 1200)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            try context.existingObject(with: posts[1100]).setValue(.string("Edited"), forKey: "title")
            try context.save()
        }
        var filter = HistoryFilter()
        filter.objectIDs = Array(posts[100..<1100]) + [posts[1100]]
        let transactions = try coordinator.fetchHistory(.fetchHistory(withFilter: filter))
        #expect(transactions.count == 2)
        #expect(transactions.first?.changes.count == 1001)
        #expect(transactions.last?.changes.map(\.changedObjectID) == [posts[1100]])
    }

    @Test func aTagsTimelineHoldsItsLinkChanges() throws {
        let coordinator = try open()
        let (tags, posts) = try Fixtures.seedBlog(coordinator, posts: 6)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let post = try context.existingObject(with: posts[1])
            try post.add(try context.existingObject(with: tags[0]), toRelationship: "tags")
            try context.save()
        }
        for tag in tags { #expect(try timeline(coordinator, tag) == scanned(coordinator, tag)) }
        #expect(try timeline(coordinator, tags[0]).count >= 2, "inserted, then linked")
    }

    @Test func theTimelineIsReadFromTheIndex() throws {
        let coordinator = try open()
        let posts = try writeHistory(coordinator)
        try flushIndex(coordinator)
        #expect(try timeline(coordinator, posts[63]).count == 5)
        // Without its rows, the object has no timeline: the index, not a scan, answers.
        let block = ObjectTimelineIndex.place(of: posts[63].primaryKey).block
        try shell("DELETE FROM _tributary_history_object WHERE entity = 'Post' AND block = \(block);")
        #expect(try timeline(coordinator, posts[63]).isEmpty)
        let other = try #require(posts.first { ObjectTimelineIndex.place(of: $0.primaryKey).block != block })
        #expect(try timeline(coordinator, other) == scanned(coordinator, other), "other blocks' rows are untouched")
    }

    @Test func smallTransactionsRowsAreWrittenAtTheNextFlushPoint() throws {
        let coordinator = try open()
        let (_, posts) = try Fixtures.seedBlog(coordinator, posts: 2)
        #expect(try indexedThrough() == 0, "two small transactions: no flush point passed yet")
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        func edit(_ title: String) throws {
            try context.performAndWait {
                try context.existingObject(with: posts[0]).setValue(.string(title), forKey: "title")
                try context.save()
            }
        }
        try edit("small")
        let small = try coordinator.currentPersistentHistoryToken().value
        #expect(try indexedThrough() < small && small % ObjectTimelineIndex.flushInterval != 0)
        #expect(try shell("SELECT count(*) FROM _tributary_history_object WHERE token = \(small);") == "0\n", "left to the flush point")
        #expect(try timeline(coordinator, posts[0]) == scanned(coordinator, posts[0]), "the transactions after the flushed point are read too")
        try flushIndex(coordinator)
        #expect(try shell("SELECT count(*) FROM _tributary_history_object WHERE token = \(small);") == "1\n")
        #expect(try indexedThrough() % ObjectTimelineIndex.flushInterval == 0)
        try edit("left again")
        // A large transaction writes its rows and those left before it.
        try Fixtures.seedBlog(coordinator, posts: 0, tags: (0..<ObjectTimelineIndex.largeTransaction).map { "big-\($0)" })
        #expect(try indexedThrough() == coordinator.currentPersistentHistoryToken().value)
        #expect(try timeline(coordinator, posts[0]) == scanned(coordinator, posts[0]))
        try onlyTheIndexAnswers()
        #expect(try timeline(coordinator, posts[0]) == scanned(coordinator, posts[0]), "every transaction was flushed: the rows alone answer")
    }

    /// A large transaction writes its rows at once, a row for every block it touched: 3,000
    /// posts in 47 blocks, each found through the index alone.
    @Test func aLargeTransactionWritesARowForEveryBlock() throws {
        let coordinator = try open()
        let (_, posts) = try Fixtures.seedBlog(coordinator, posts: 3_000)
        let token = try coordinator.currentPersistentHistoryToken().value
        let blocks = Set(posts.map { ObjectTimelineIndex.place(of: $0.primaryKey).block })
        #expect(blocks.count == 47)
        let stored = try shell("SELECT block FROM _tributary_history_object WHERE entity = 'Post' AND token = \(token) ORDER BY block;")
        #expect(stored.split(separator: "\n").compactMap { Int64($0) } == blocks.sorted())
        #expect(try indexedThrough() == token, "a large transaction moves the flushed point to itself")
        try onlyTheIndexAnswers()
        for index in stride(from: 0, to: posts.count, by: 64) {
            #expect(try timeline(coordinator, posts[index]) == [token], "the index alone answers for block \(index / 64)")
        }
    }

    @Test func aFlushedPointAnotherProgramWroteBreaksNoWrite() throws {
        let coordinator = try open()
        let posts = try writeHistory(coordinator)
        try flushIndex(coordinator)
        // Moved back (or made no number): the next flush writes rows that exist again.
        for value in ["0", "not a token", "-5"] {
            try shell("UPDATE _tributary_metadata SET value = '\(value)' WHERE key = 'historyObjectIndexThrough';")
            try flushIndex(coordinator)
            for object in objects(posts) { #expect(try timeline(coordinator, object) == scanned(coordinator, object)) }
        }
    }

    @Test func pruningTakesTheIndexRowsWithItsTransactions() throws {
        let coordinator = try open()
        let posts = try writeHistory(coordinator)
        try flushIndex(coordinator)
        let all = try scanned(coordinator, posts[0])
        let token = PersistentHistoryToken(value: try #require(all.dropLast().last), storeKey: PersistentHistoryToken.key(of: posts[0].storeID))
        try coordinator.deleteHistory(.deleteHistory(before: token))
        let oldest = try #require(try coordinator.fetchHistory(.fetchHistory(after: nil)).first).token.value
        #expect(try shell("SELECT count(*) FROM _tributary_history_object WHERE token < \(oldest);") == "0\n")
        #expect(try shell("SELECT count(*) FROM _tributary_history_object;") != "0\n")
        #expect(try timeline(coordinator, posts[0]) == all.filter { $0 >= oldest })
    }

    @Test func anOlderStoreGetsTheIndexOnUpgrade() throws {
        var posts: [ObjectID] = []
        do { posts = try writeHistory(try open()) }
        // The store as format 3 left it: no index.
        try shell("DROP TABLE _tributary_history_object; UPDATE _tributary_metadata SET value = '3' WHERE key = 'historyFormat';")
        let readOnly = PersistentStoreDescription(url: path)
        readOnly.isReadOnly = true
        let reader = try Fixtures.blogCoordinator(readOnly)
        #expect(try timeline(reader, posts[63]) == scanned(reader, posts[63]), "a read-only open of the old format scans")

        let coordinator = try open()
        #expect(try shell("SELECT value FROM _tributary_metadata WHERE key = 'historyFormat';") == "\(HistorySchema.formatVersion)\n")
        for object in objects(posts) { #expect(try timeline(coordinator, object) == scanned(coordinator, object)) }
        try shell("UPDATE Post SET title = 'after' WHERE _pk = \(posts[63].primaryKey);")
        #expect(try timeline(coordinator, posts[63]).count == 6)
    }

    @Test func aStoreMadeWithoutTheIndexScans() throws {
        let coordinator = try open(objectIndex: false)
        let posts = try writeHistory(coordinator)
        #expect(try shell("SELECT count(*) FROM sqlite_schema WHERE name = '_tributary_history_object';") == "0\n")
        for object in objects(posts) { #expect(try timeline(coordinator, object) == scanned(coordinator, object)) }
    }

    @Test func entriesMergeKeysIntoBlocks() {
        var entries = ObjectTimelineIndex.Entries()
        for key in [0, 1, 63, 64, -1, -64, -65, 1] as [Int64] { entries.add(entityName: "Post", key: key) }
        entries.add(entityName: "Tag", key: 1)
        let rows = entries.rows.map { (entries.names[$0.entity], $0.block, UInt64(bitPattern: $0.keys)) }
        #expect(rows.map(\.0) == ["Post", "Post", "Post", "Post", "Tag"])
        #expect(rows.map(\.1) == [0, 1, -1, -2, 0])
        #expect(rows.map(\.2) == [1 | 2 | 1 << 63, 1, 1 << 63 | 1, 1 << 63, 2] as [UInt64])
    }
}
