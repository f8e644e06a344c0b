import Foundation
import Testing
@testable import Tributary

/// A consumer position is a promise that everything through it was read: it cannot be put
/// after the newest transaction (the consumer would skip what comes, and pruning would
/// delete it unread), and names that would garble listings are refused.
@Suite struct ConsumerValidationTests {
    static func store() throws -> (PersistentStoreCoordinator, TemporaryDirectory) {
        let dir = TemporaryDirectory()
        let description = PersistentStoreDescription(url: dir.file("c.sqlite"))
        description.persistentHistoryTracking = true
        let coordinator = try Fixtures.blogCoordinator(description)
        try Fixtures.seedBlog(coordinator, posts: 3)
        return (coordinator, dir)
    }

    @Test func aTokenAfterTheNewestTransactionIsRefused() throws {
        let (coordinator, _dir) = try Self.store()
        _ = _dir
        let current = try coordinator.currentPersistentHistoryToken()
        let future = PersistentHistoryToken(value: current.value + 1, storeID: coordinator.persistentStores[0].identifier)
        try coordinator.registerHistoryConsumer("audit", startingAt: .oldest)
        let error = try #require(throws: TributaryError.self) { try coordinator.commitHistoryConsumer("audit", through: future) }
        #expect(error.message.contains("after the store's newest transaction"))
        #expect(try coordinator.historyConsumer(named: "audit").token.value == 0)
        #expect(throws: TributaryError.self) { try coordinator.registerHistoryConsumer("ahead", startingAt: .token(future)) }
        #expect(try coordinator.historyConsumers().map(\.name) == ["audit"])
        // The newest token itself is a position a consumer can hold.
        try coordinator.commitHistoryConsumer("audit", through: current)
        #expect(try coordinator.historyConsumer(named: "audit").token == current)
        // Pruning what the consumer read leaves the transaction it will read next.
        try coordinator.execute(BatchInsertRequest(entityName: "Tag", objects: [["name": "later"]]))
        _ = try coordinator.deleteHistory(.deleteConsumedHistory())
        #expect(try coordinator.fetchHistory(.fetchHistory(after: current)).count == 1)
    }

    @Test(arguments: ["", "   ", "\t\n", "line\nbreak", "bell\u{7}", "esc\u{1B}[31m", "nul\u{0}", String(repeating: "x", count: 201), String(repeating: "é", count: 101)])
    func badConsumerNamesAreRefused(name: String) throws {
        let (coordinator, _dir) = try Self.store()
        _ = _dir
        let error = try #require(throws: TributaryError.self) { try coordinator.registerHistoryConsumer(name) }
        #expect(error.code == .invalidInput)
        #expect(error.message.contains("is not a valid consumer name"))
        #expect(!error.description.contains("\n") && !error.description.contains("\u{1B}"))
        #expect(try coordinator.historyConsumers().isEmpty)
    }

    @Test func longAndUnicodeNamesWithinTheBoundAreAccepted() throws {
        let (coordinator, _dir) = try Self.store()
        _ = _dir
        for name in [String(repeating: "x", count: 200), "search-index", "café ☕", "a b"] {
            #expect(try coordinator.registerHistoryConsumer(name).name == name)
        }
    }
}
