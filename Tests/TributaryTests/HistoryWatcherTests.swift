import Foundation
import Synchronization
import Testing
@testable import Tributary

extension NotificationTests {
    /// `HistoryWatcher`: the delivery step alone, then the loop woken by other
    /// coordinators, other processes and the `sqlite3` shell.
    @Suite struct HistoryWatcherTests {
        struct HandlerFailed: Error {}

        /// Collects what a handler saw.
        final class Seen: Sendable {
            private let batches = Mutex<[[PersistentHistoryTransaction]]>([])
            func append(_ batch: [PersistentHistoryTransaction]) { batches.withLock { $0.append(batch) } }
            var all: [[PersistentHistoryTransaction]] { batches.withLock { $0 } }
            var tokens: [Int64] { all.flatMap { $0.map(\.token.value) } }
        }

        func memoryStore(_ name: String) -> PersistentStoreDescription {
            notifyingDescription(PersistentStoreDescription.inMemory(named: "\(name)-\(UUID().uuidString)").url)
        }

        @Test func startsAtTheCurrentTokenAndDeliversInTokenOrder() async throws {
            let coordinator = try Fixtures.blogCoordinator(memoryStore("order"))
            try insertPost(coordinator, 0)
            let watcher = try HistoryWatcher(coordinator: coordinator)
            #expect(watcher.checkpoint.value == 1)
            #expect(try await watcher.deliverPending { _ in Issue.record("nothing is pending") } == 0)
            for i in 1...5 { try insertPost(coordinator, i) }
            var configuration = HistoryWatcher.Configuration()
            configuration.batchSize = 2
            let small = try HistoryWatcher(coordinator: coordinator, configuration: configuration)
            let seen = Seen()
            #expect(try await watcher.deliverPending { seen.append($0) } == 5)
            #expect(seen.tokens == [2, 3, 4, 5, 6])
            #expect(watcher.checkpoint.value == 6)
            // The small batches come in three calls, in order.
            try insertPost(coordinator, 6)
            let batches = Seen()
            #expect(try await small.deliverPending { batches.append($0) } == 1)
            #expect(batches.tokens == [7])
        }

        @Test func startsAtTheOldestKeptHistoryWhenTold() async throws {
            let coordinator = try Fixtures.blogCoordinator(memoryStore("oldest"))
            for i in 0..<3 { try insertPost(coordinator, i) }
            var configuration = HistoryWatcher.Configuration()
            configuration.startsAtOldest = true
            let seen = Seen()
            try await HistoryWatcher(coordinator: coordinator, configuration: configuration).deliverPending { seen.append($0) }
            #expect(seen.tokens == [1, 2, 3])
            configuration.startsAtOldest = false
            configuration.startToken = PersistentHistoryToken(value: 2, storeID: try coordinator.requireStore().identifier)
            let fromToken = Seen()
            try await HistoryWatcher(coordinator: coordinator, configuration: configuration).deliverPending { fromToken.append($0) }
            #expect(fromToken.tokens == [3])
        }

        @Test func aConsumerResumesWithoutGapOrDuplicate() async throws {
            let dir = TemporaryDirectory()
            let description = notifyingDescription(dir.file("resume.sqlite"))
            let seen = Seen()
            do {
                let coordinator = try Fixtures.blogCoordinator(description)
                let watcher = try HistoryWatcher(coordinator: coordinator, configuration: .init(consumerName: "audit"))
                for i in 0..<3 { try insertPost(coordinator, i) }
                try await watcher.deliverPending { seen.append($0) }
                for i in 3..<5 { try insertPost(coordinator, i) }
            }
            // A new process would open a new coordinator: it continues after the consumer.
            let coordinator = try Fixtures.blogCoordinator(description)
            let watcher = try HistoryWatcher(coordinator: coordinator, configuration: .init(consumerName: "audit"))
            #expect(watcher.checkpoint.value == 3)
            try await watcher.deliverPending { seen.append($0) }
            #expect(seen.tokens == [1, 2, 3, 4, 5])
            #expect(try coordinator.historyConsumer(named: "audit").token.value == 5)
        }

        @Test func filtersLeaveOutOwnAuthorAndOtherEntitiesButTheConsumerKeepsUp() async throws {
            let coordinator = try Fixtures.blogCoordinator(memoryStore("filters"))
            var configuration = HistoryWatcher.Configuration(consumerName: "me")
            configuration.filter.excludedAuthors = ["me"]
            configuration.filter.entities = ["Post"]
            let watcher = try HistoryWatcher(coordinator: coordinator, configuration: configuration)
            try insertPost(coordinator, 0, author: "other")
            try insertPost(coordinator, 1, author: "me")
            try coordinator.execute(BatchInsertRequest(entityName: "Tag", objects: [["name": .string("swift")]]))
            let seen = Seen()
            #expect(try await watcher.deliverPending { seen.append($0) } == 1)
            #expect(seen.all.flatMap { $0.map(\.author) } == ["other"])
            #expect(try coordinator.historyConsumer(named: "me").token.value == 3)
            #expect(try coordinator.historyConsumer(named: "me").lagTransactions == 0)
        }

        @Test func aFailingHandlerKeepsItsTransactionForTheNextCall() async throws {
            let coordinator = try Fixtures.blogCoordinator(memoryStore("fail"))
            let watcher = try HistoryWatcher(coordinator: coordinator, configuration: .init(consumerName: "flaky"))
            try insertPost(coordinator, 0)
            await #expect(throws: HandlerFailed.self) { try await watcher.deliverPending { _ in throw HandlerFailed() } }
            #expect(watcher.checkpoint.value == 0)
            #expect(try coordinator.historyConsumer(named: "flaky").token.value == 0)
            let seen = Seen()
            try await watcher.deliverPending { seen.append($0) }
            #expect(seen.tokens == [1])
        }

        @Test func theLoopRetriesWithCappedBackoffAndReportsEachFailure() async throws {
            let coordinator = try Fixtures.blogCoordinator(memoryStore("backoff"))
            var configuration = HistoryWatcher.Configuration(consumerName: "retry")
            configuration.backoff = .init(initial: .milliseconds(10), maximum: .milliseconds(30))
            let slept = Mutex<[Duration]>([])
            let watcher = try HistoryWatcher(coordinator: coordinator, configuration: configuration) { delay in slept.withLock { $0.append(delay) } }
            try insertPost(coordinator, 0)
            let attempts = Mutex<[Int64]>([])
            let failures = Mutex<[Int]>([])
            let task = Task {
                await watcher.run(reporting: { event in
                    if case .failed(let failure) = event { failures.withLock { $0.append(failure.attempt) } }
                }) { batch in
                    let calls = attempts.withLock { $0.append(contentsOf: batch.map(\.token.value)); return $0.count }
                    if calls <= 4 { throw HandlerFailed() }
                }
            }
            #expect(await Wait.until { watcher.checkpoint.value == 1 })
            task.cancel()
            await task.value
            #expect(attempts.withLock { $0 } == [1, 1, 1, 1, 1])
            #expect(failures.withLock { $0 } == [1, 2, 3, 4])
            #expect(slept.withLock { $0 } == [.milliseconds(10), .milliseconds(20), .milliseconds(30), .milliseconds(30)])
            #expect(try coordinator.historyConsumer(named: "retry").token.value == 1)
        }

        /// The loop on one coordinator delivers another's saves, with what merging needs.
        func loopSeesAnotherCoordinator(_ description: PersistentStoreDescription) async throws {
            let writer = try Fixtures.blogCoordinator(description)
            let reader = try Fixtures.blogCoordinator(description)
            var configuration = HistoryWatcher.Configuration(consumerName: "view")
            configuration.filter.excludedAuthors = ["view"]
            let watcher = try HistoryWatcher(coordinator: reader, configuration: configuration)
            let seen = Seen()
            let task = Task { await watcher.run { seen.append($0) } }
            try insertPost(reader, 0, author: "view")
            let token = try insertPost(writer, 1, author: "importer")
            #expect(await Wait.until { seen.tokens == [token.value] })
            let inserted = try #require(seen.all.flatMap { $0 }.objectIDNotification[.insert])
            #expect(inserted.map(\.entityName) == ["Post"])
            task.cancel()
            await task.value
            #expect(try reader.historyConsumer(named: "view").token == token)
        }

        @Test func theLoopSeesAnotherCoordinatorOnANamedInMemoryStore() async throws {
            try await loopSeesAnotherCoordinator(memoryStore("loop"))
        }

        @Test func theLoopSeesAnotherCoordinatorOnAFileStore() async throws {
            let dir = TemporaryDirectory()
            try await loopSeesAnotherCoordinator(notifyingDescription(dir.file("loop.sqlite")))
        }

        @Test func theLoopSeesAnotherProcessAndIsWokenByTheSQLiteShell() async throws {
            let dir = TemporaryDirectory()
            let path = dir.file("p.sqlite").path
            let coordinator = try Fixtures.blogCoordinator(notifyingDescription(dir.file("p.sqlite")))
            try insertPost(coordinator, 0)
            let watcher = try HistoryWatcher(coordinator: coordinator)
            let seen = Seen()
            let wakes = Mutex(0)
            let task = Task {
                await watcher.run(reporting: { if case .woke = $0 { wakes.withLock { $0 += 1 } } }) { seen.append($0) }
            }
            try await Task.sleep(for: .milliseconds(20))  // let the loop start listening
            let update = try await TributaryBinary.run(TributaryBinary.url, ["update", path, "--entity", "Post", "--all", "--set", "title=Renamed", "--author", "other"])
            #expect(update.status == 0, "\(update.stderr)")
            #expect(await Wait.until { seen.all.flatMap { $0 }.map(\.author) == ["other"] })
            let updated = seen.all.first?.first?.changes.first
            #expect(updated?.changeType == .update)
            let wakesBefore = wakes.withLock { $0 }
            let shell = try await TributaryBinary.run(URL(fileURLWithPath: "/usr/bin/sqlite3"), [path, "UPDATE Post SET title = 'shell'"])
            #expect(shell.status == 0, "\(shell.stderr)")
            #expect(await Wait.until { wakes.withLock { $0 } > wakesBefore })
            // The shell's write is history too (issue 22): delivered with its values, its source foreign.
            #expect(await Wait.until { seen.tokens == [2, 3] })
            let shellTransaction = seen.all.flatMap { $0 }.last
            #expect(shellTransaction?.processName == "foreign" && shellTransaction?.author == nil)
            #expect(shellTransaction?.changes.first?.properties.first { $0.name == "title" }?.after == .string("shell"))
            task.cancel()
            await task.value
            #expect(await Wait.until { StoreChangeMonitor.held(by: coordinator) == StoreChangeMonitor.Held() })
        }
    }
}
