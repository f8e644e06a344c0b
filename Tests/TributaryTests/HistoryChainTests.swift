import Foundation
import Testing
@testable import Tributary
import TributaryTestSupport

/// The hash chain over history (issue 24): every kind of transaction is chained, history
/// written before the chain is chained on upgrade, the chain can be turned off, and each
/// transaction's reason is recorded and covered by its hash.
@Suite struct HistoryChainTests {
    let dir = TemporaryDirectory()
    var path: URL { dir.file("blog.sqlite") }

    func open(chain: Bool = true) throws -> PersistentStoreCoordinator {
        let description = PersistentStoreDescription(url: path)
        description.persistentHistoryTracking = true
        description.historyHashChain = chain
        return try Fixtures.blogCoordinator(description)
    }

    /// Runs `sql` on the store file with the `sqlite3` shell; returns what it prints.
    @discardableResult
    func edit(_ sql: String) throws -> String {
        try ForeignWriter.shell(path, sql)
    }

    @Test func everyKindOfTransactionIsChained() throws {
        let coordinator = try open()
        try Fixtures.seedBlog(coordinator, posts: 3)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.performAndWait {
            let post = try #require(try context.fetch(FetchRequest(entityName: "Post")).first)
            try post.setValue(.string("Edited"), forKey: "title")
            try context.save()
        }
        try edit("UPDATE Tag SET color = 'red' WHERE name = 'swift';")
        let newest = try coordinator.currentPersistentHistoryToken()
        let report = try coordinator.verifyHistoryChain()
        #expect(report.problem == nil && report.isChained)
        #expect(report.headToken == newest.value && report.transactions == Int(newest.value))
        let stored = try edit("SELECT lower(hex(hash)) FROM _tributary_history ORDER BY token DESC LIMIT 1;")
        #expect(stored == report.headHash + "\n")
        let foreign = try #require(try coordinator.fetchHistory(.fetchHistory(after: nil)).last)
        #expect(foreign.processName == "foreign", "the shell's write is the newest transaction, chained like the others")
    }

    @Test func historyWrittenBeforeTheChainIsChainedOnUpgrade() throws {
        do {
            let coordinator = try open()
            try Fixtures.seedBlog(coordinator, posts: 4)
        }
        // The store as format 2 left it: no reason or hash columns, no anchor.
        try edit("""
            ALTER TABLE _tributary_history DROP COLUMN reason;
            ALTER TABLE _tributary_history DROP COLUMN hash;
            DROP TABLE _tributary_history_prune;
            DELETE FROM _tributary_metadata WHERE key = 'historyChainAnchor';
            UPDATE _tributary_metadata SET value = '2' WHERE key = 'historyFormat';
            """)
        let readOnly = PersistentStoreDescription(url: path)
        readOnly.isReadOnly = true
        let reader = try Fixtures.blogCoordinator(readOnly)
        #expect(try reader.fetchHistory(.fetchHistory(after: nil)).allSatisfy { $0.reason == nil }, "a read-only open reads the old format")
        #expect(throws: TributaryError.self) { try reader.verifyHistoryChain() }

        let coordinator = try open()
        let report = try coordinator.verifyHistoryChain()
        let newest = try coordinator.currentPersistentHistoryToken().value
        #expect(report.problem == nil && report.transactions == Int(newest))
        #expect(try edit("SELECT value FROM _tributary_metadata WHERE key = 'historyFormat';") == "\(HistorySchema.formatVersion)\n")
        try Fixtures.seedBlog(coordinator, posts: 1, tags: ["more"])
        #expect(try coordinator.verifyHistoryChain().problem == nil, "new transactions chain after the upgraded ones")
    }

    @Test func aStoreMadeWithTheChainOffHasNone() throws {
        let coordinator = try open(chain: false)
        try Fixtures.seedBlog(coordinator, posts: 2)
        let report = try coordinator.verifyHistoryChain()
        #expect(!report.isChained && report.problem == nil)
        #expect(try edit("SELECT count(*) FROM _tributary_history WHERE hash IS NOT NULL;") == "0\n")
    }

    @Test func pruningEverythingKeepsTheAnchorForTheNextTransaction() throws {
        let coordinator = try open()
        try Fixtures.seedBlog(coordinator, posts: 2)
        let newest = try coordinator.currentPersistentHistoryToken()
        _ = try coordinator.deleteHistory(.deleteHistory(before: newest))
        let anchored = try coordinator.verifyHistoryChain()
        #expect(anchored.problem == nil && anchored.transactions == 0 && anchored.headToken == newest.value)
        try Fixtures.seedBlog(coordinator, posts: 1, tags: ["more"])
        let report = try coordinator.verifyHistoryChain()
        #expect(report.problem == nil && report.oldestToken == newest.value + 1)
        // The new first transaction chains from the last pruned one's hash, not from zero.
        try edit("UPDATE _tributary_metadata SET value = '\(String(repeating: "0", count: 64))' WHERE key = 'historyChainAnchor'")
        #expect(try coordinator.verifyHistoryChain().problem?.token == newest.value + 1)
    }

    @Test func theReasonIsRecordedFromContextsAndBatchesAndCoveredByTheHash() throws {
        let coordinator = try open()
        var request = BatchInsertRequest(entityName: "Tag", objects: [["name": "swift"]])
        request.transaction = TransactionMetadata(author: "importer", reason: "ticket 7: seed tags")
        try coordinator.execute(request)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        context.transactionReason = "merge duplicates"
        try context.performAndWait {
            let tag = try #require(try context.fetch(FetchRequest(entityName: "Tag")).first)
            try tag.setValue(.string("red"), forKey: "color")
            try context.save()
        }
        let history = try coordinator.fetchHistory(.fetchHistory(after: nil))
        #expect(history.map(\.reason) == ["ticket 7: seed tags", "merge duplicates"])
        var viewed: [String?] = []
        try coordinator.enumerateHistoryChanges(.fetchHistory(after: nil)) { viewed.append($0.reason) }
        #expect(viewed == ["ticket 7: seed tags", "merge duplicates"])
        try edit("UPDATE _tributary_history SET reason = 'routine' WHERE token = 2")
        let problem = try coordinator.verifyHistoryChain().problem
        #expect(problem?.token == 2 && problem?.kind == .altered)
    }

    @Test func aPruneInSeveralBatchesIsOneLoggedRowAndTheChainStaysAnchored() throws {
        let coordinator = try open()
        for i in 0..<20 { try coordinator.execute(BatchInsertRequest(entityName: "Tag", objects: [["name": .string("tag-\(i)")]])) }
        let through = try coordinator.currentPersistentHistoryToken()
        try coordinator.execute(BatchInsertRequest(entityName: "Tag", objects: [["name": "kept"]]))
        let result = try coordinator.deleteHistory(.deleteHistory(before: through))
        #expect(result.transactions == 20 && result.changes == 20)
        #expect(try edit("SELECT through, transactions, changes, length(anchor) FROM _tributary_history_prune;") == "20|20|20|32\n")
        let report = try coordinator.verifyHistoryChain()
        #expect(report.problem == nil && report.transactions == 1 && report.oldestToken == 21)
    }

    @Test func aCheckpointIsRefusedWhenTheChainBeforeItsTokenWasEdited() throws {
        let coordinator = try open()
        try Fixtures.seedBlog(coordinator, posts: 2)
        let key = HistoryCheckpoint.newSigningKey()
        let checkpoint = try coordinator.makeHistoryCheckpoint(signingKey: key.privateKey)
        try coordinator.verify(checkpoint, trustedKey: key.publicKey)
        // An edit before the checkpoint's token leaves the hash at the token as it was; the
        // chain up to it no longer holds, so the checkpoint no longer vouches for the history.
        try edit("UPDATE _tributary_history SET payload = payload || x'00' WHERE token = 1;")
        do {
            try coordinator.verify(checkpoint, trustedKey: key.publicKey)
            Issue.record("an edited history passed against its checkpoint")
        } catch let error as TributaryError {
            #expect(error.code == .historyTampered && error.message.contains("token 1"), "\(error)")
        }
    }
}
