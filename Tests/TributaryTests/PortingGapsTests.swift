import Foundation
import Testing
@testable import Tributary

/// Issue 19's silent gaps: each works as Core Data's does, or fails with a clear error.
@Suite struct PortingGapsTests {
    private func historyCoordinator() throws -> PersistentStoreCoordinator {
        var description = PersistentStoreDescription.inMemory()
        description.persistentHistoryTracking = true
        return try Fixtures.blogCoordinator(description)
    }

    // MARK: 4. Batch requests run from a context carry its author and name

    @Test func contextBatchRequestsRecordTheContextsAuthorAndName() throws {
        let coordinator = try historyCoordinator()
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        context.transactionAuthor = "app"
        context.name = "importer"
        let start = try coordinator.currentPersistentHistoryToken()
        var insert = BatchInsertRequest(entityName: "Tag", objects: [["name": "a"], ["name": "b"]])
        insert.resultType = .objectIDs
        let ids = try context.execute(insert).objectIDs
        try context.execute(BatchUpdateRequest(entityName: "Tag", propertiesToUpdate: ["color": "red"]))
        try context.execute(BatchDeleteRequest(objectIDs: [ids[0]]))
        var own = BatchUpdateRequest(entityName: "Tag", propertiesToUpdate: ["color": "blue"])
        own.transaction = TransactionMetadata(author: "cloud")   // the request's own author wins
        try context.execute(own)
        let transactions = try #require(try context.execute(PersistentHistoryChangeRequest.fetchHistory(after: start)).transactions)
        #expect(transactions.map(\.author) == ["app", "app", "app", "cloud"])
        #expect(transactions.map(\.contextName) == ["importer", "importer", "importer", "importer"])
        var countRequest = PersistentHistoryChangeRequest.fetchHistory(after: start)
        countRequest.resultType = .count
        guard case .count(let count) = try context.execute(countRequest) else {
            Issue.record("a count request answers with a count"); return
        }
        #expect(count == 4)
    }

    // MARK: 5. A delete-history request with a filter is refused

    @Test func aFilteredHistoryDeleteIsRefusedAndDeletesNothing() throws {
        let coordinator = try historyCoordinator()
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        context.transactionAuthor = "app"
        try context.execute(BatchInsertRequest(entityName: "Tag", objects: [["name": "a"]]))
        var cloud = BatchInsertRequest(entityName: "Tag", objects: [["name": "b"]])
        cloud.transaction = TransactionMetadata(author: "cloudkit")
        try coordinator.execute(cloud)
        var request = PersistentHistoryChangeRequest.deleteHistory(before: try coordinator.currentPersistentHistoryToken())
        request.filter.authors = ["app"]
        let error = try #require(throws: TributaryError.self) { try coordinator.deleteHistory(request) }
        #expect(error.code == .invalidInput)
        #expect(error.message.contains("filter"))
        #expect(try coordinator.fetchHistory(.fetchHistory(after: nil)).count == 2)
    }
}
