import Foundation
import Testing
@testable import Tributary

/// `HistoryFollower` and `CommitWaiter`, the one way every follower reads, commits and waits.
@Suite struct HistoryFollowerTests {
    /// Three transactions of 3, 2 and 4 posts (tokens 1, 2, 3).
    func storeWithThreeTransactions(_ name: String) throws -> PersistentStoreCoordinator {
        let coordinator = try Fixtures.blogCoordinator(notifyingDescription(PersistentStoreDescription.inMemory(named: "\(name)-\(UUID().uuidString)").url))
        var next = 0
        for size in [3, 2, 4] {
            let request = BatchInsertRequest(entityName: "Post", objects: (0..<size).map { _ in
                defer { next += 1 }
                return ["externalID": .string("ext-\(next)"), "title": .string("Post \(next)"), "createdAt": .date(Date(timeIntervalSince1970: Double(next)))]
            })
            try coordinator.execute(request)
        }
        return coordinator
    }

    @Test func boundedStepsResumeInsideATransactionAndSayWhatIsComplete() throws {
        let coordinator = try storeWithThreeTransactions("steps")
        let follower = try HistoryFollower(coordinator: coordinator)
        let head = try follower.head(after: 0)
        #expect(head.value == 3)
        var all: [String] = []
        let whole = try follower.readChanges(after: 0, through: head) { all.append("\($0.token.value).\($0.index)") }
        #expect(whole.caughtUp && whole.count == 9 && whole.completeThrough == nil)
        #expect(all == ["1.0", "1.1", "1.2", "2.0", "2.1", "3.0", "3.1", "3.2", "3.3"])

        // Steps of 4 stop inside transactions 2 and 3: the next change is of the same
        // transaction, so no step says a transaction is whole; each resumes after its last.
        var stepped: [String] = []
        var after: Int64 = 0
        var resume: (token: Int64, index: Int)?
        var completes: [Int64?] = []
        while true {
            let step = try follower.readChanges(after: after, through: head, resumingAfter: resume, limit: 4) { stepped.append("\($0.token.value).\($0.index)") }
            completes.append(step.completeThrough)
            if step.caughtUp { break }
            resume = step.newest
            after = max(after, step.completeThrough ?? 0, HistoryFollower.completeToken(step.newest!.token, isSnapshot: false))
        }
        #expect(stepped == all, "no change twice, none left out")
        #expect(completes == [nil, nil, nil])
        // A step of 5 ends with transaction 2, and the next change is of 3: 2 is whole.
        let five = try follower.readChanges(after: 0, through: head, limit: 5) { _ in }
        #expect(!five.caughtUp && five.completeThrough == 2 && five.newest! == (2, 1))
        // Nothing after the head.
        #expect(try follower.readChanges(after: 3, through: head) { _ in Issue.record("nothing after the head") }.count == 0)
    }

    @Test func theCompleteTokenRuleAndTheConsumerCommit() throws {
        #expect(HistoryFollower.completeToken(42, isSnapshot: false) == 41)
        #expect(HistoryFollower.completeToken(42, isSnapshot: true) == 42)
        let coordinator = try storeWithThreeTransactions("commit")
        let follower = try HistoryFollower(coordinator: coordinator, consumerName: "reader")
        #expect(try follower.start(at: .oldest).value == 0)
        let first = try follower.readTransactions(after: try follower.start(at: .oldest), through: try follower.head(after: 0), limit: 2)
        #expect(first.map(\.token.value) == [1, 2])
        try follower.commit(through: 2)
        #expect(try coordinator.historyConsumer(named: "reader").token.value == 2)
        #expect(try follower.start(at: .current).value == 2, "an existing consumer starts where it is")
        // Without a consumer, nothing is written.
        let memory = try HistoryFollower(coordinator: coordinator)
        try memory.commit(through: 3)
        #expect(try coordinator.historyConsumers().map(\.name) == ["reader"])
    }

    @Test func theWaiterWakesOnACommitByAnotherCoordinatorAndEndsWhenCancelled() async throws {
        let name = "waiter-\(UUID().uuidString)"
        let url = PersistentStoreDescription.inMemory(named: name).url
        let reader = try Fixtures.blogCoordinator(notifyingDescription(url))
        let writer = try Fixtures.blogCoordinator(notifyingDescription(url))
        let before = try reader.currentPersistentHistoryToken()
        var waiter = CommitWaiter(reader)
        try insertPost(writer, 1)   // after the waiter listens, before it looks: not missed
        let head = try await waiter.waitForCommit(after: before)
        #expect(head.value == before.value + 1)

        let waiting = Task {
            var waiter = CommitWaiter(reader)
            return try await waiter.waitForCommit(after: head)
        }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
    }
}
