import Foundation
import Testing
@testable import Tributary

/// Transactions large enough that their history is compressed in chunks while they are
/// written (``HistoryChunkCompressor``): read back whole, merged when an object changes
/// twice after chunks went out, and forgotten on rollback.
@Suite struct LargeTransactionHistoryTests {
    let coordinator: PersistentStoreCoordinator

    init() throws {
        let description = PersistentStoreDescription.inMemory()
        description.persistentHistoryTracking = true
        coordinator = try Fixtures.blogCoordinator(description)
    }

    /// Posts with ~200 bytes of values each: 3,000 make ~600 KB of history body, many chunks.
    func posts(_ range: Range<Int>, title: (Int) -> String = { "Post \($0)" }) -> [[String: AttributeValue]] {
        range.map { i in
            ["externalID": .string("ext-\(i)"), "title": .string(title(i)), "content": .string(String(repeating: "body \(i) ", count: 20)),
             "createdAt": .date(Date(timeIntervalSince1970: Double(i)))]
        }
    }

    @Test func aLargeTransactionReadsBackWhole() throws {
        try coordinator.execute(BatchInsertRequest(entityName: "Post", objects: posts(0..<3000)))
        let transactions = try coordinator.fetchHistory(.fetchHistory(after: nil))
        #expect(transactions.count == 1)
        let changes = try #require(transactions.first).changes
        #expect(changes.count == 3000)
        for (i, change) in changes.enumerated() {
            #expect(change.changeType == .insert)
            #expect(change.insertedValues["externalID"] == .string("ext-\(i)"))
            #expect(change.insertedValues["content"] == .string(String(repeating: "body \(i) ", count: 20)))
        }
    }

    @Test func anObjectChangedAgainAfterChunksWentOutIsMerged() throws {
        // The last row upserts the first post: its insert, long since in a compressed chunk,
        // becomes one insert with the final title.
        var objects = posts(0..<3000)
        objects += posts(0..<1) { _ in "Renamed" }
        try coordinator.execute(BatchInsertRequest(entityName: "Post", objects: objects))
        let changes = try #require(try coordinator.fetchHistory(.fetchHistory(after: nil)).first).changes
        #expect(changes.count == 3000)
        let first = try #require(changes.first { $0.insertedValues["externalID"] == .string("ext-0") })
        #expect(first.changeType == .insert)
        #expect(first.insertedValues["title"] == .string("Renamed"))
        #expect(changes.filter { $0.insertedValues["title"] == .string("Post 1") }.count == 1)
    }

    @Test func aRolledBackLargeTransactionLeavesNoHistory() throws {
        // The last object lacks a required value: the request fails after thousands of rows.
        var objects = posts(0..<3000)
        objects.append(["externalID": .string("no-title"), "createdAt": .date(Date())])
        #expect(throws: TributaryError.self) { try coordinator.execute(BatchInsertRequest(entityName: "Post", objects: objects)) }
        #expect(try coordinator.fetchHistory(.fetchHistory(after: nil)).isEmpty)
        // The next transaction records only its own rows.
        try coordinator.execute(BatchInsertRequest(entityName: "Post", objects: posts(5000..<6000)))
        let changes = try #require(try coordinator.fetchHistory(.fetchHistory(after: nil)).first).changes
        #expect(changes.count == 1000)
        #expect(changes.first?.insertedValues["externalID"] == .string("ext-5000"))
    }
}
