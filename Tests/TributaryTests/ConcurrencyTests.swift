import Foundation
import Synchronization
import Testing
@testable import Tributary

@Suite struct ConcurrencyTests {
    /// Readers complete while a long write transaction is open (WAL, pooled readers).
    @Test func readersCompleteWhileAWriteIsOpen() async throws {
        let dir = TemporaryDirectory()
        let coordinator = try Fixtures.blogCoordinator(PersistentStoreDescription(url: dir.file("c.sqlite")))
        try Fixtures.seedBlog(coordinator, posts: 100)
        let store = try coordinator.requireStore()
        let writeOpen = DispatchSemaphore(value: 0)
        let releaseWrite = DispatchSemaphore(value: 0)
        let writer = Thread {
            try? store.database.write { db in
                try db.execute("INSERT INTO \"Tag\" (\"name\") VALUES ('uncommitted')")
                writeOpen.signal()
                releaseWrite.wait()
            }
        }
        writer.start()
        writeOpen.wait()
        // Four readers at once, each a full read while the write transaction is open:
        // they finish before the write is released, and none sees the uncommitted row.
        let writeStillOpen = Flag(true)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    let total = try coordinator.count(for: FetchRequest(entityName: "Post")) + (try coordinator.count(for: FetchRequest(entityName: "Tag")))
                    #expect(writeStillOpen.value)
                    return total
                }
            }
            for try await total in group { #expect(total == 103) }
        }
        writeStillOpen.value = false
        releaseWrite.signal()
        // After the commit the new row is visible.
        try await Task.sleep(for: .milliseconds(50))
        #expect(try coordinator.count(for: FetchRequest(entityName: "Tag")) == 4)
    }

    @Test func runningOutOfReadersGivesATimeout() throws {
        let description = PersistentStoreDescription.inMemory()
        description.connectionPoolMaxSize = 1
        description.busyTimeout = 0.1
        let coordinator = try Fixtures.blogCoordinator(description)
        let store = try coordinator.requireStore()
        let held = try store.database.readers.checkout()
        defer { store.database.readers.checkin(held) }
        let error = try #require(throws: TributaryError.self) { try coordinator.count(for: FetchRequest(entityName: "Post")) }
        #expect(error.code == .readerTimeout)
    }

    @Test func concurrentBatchWritersAllLand() async throws {
        let dir = TemporaryDirectory()
        let coordinator = try Fixtures.blogCoordinator(PersistentStoreDescription(url: dir.file("w.sqlite")))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for batch in 0..<5 {
                        try coordinator.execute(BatchInsertRequest(entityName: "Tag", objects: (0..<20).map { ["name": .string("w\(worker)-b\(batch)-\($0)")] }))
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try coordinator.count(for: FetchRequest(entityName: "Tag")) == 800)
    }
}

/// A Sendable boolean shared between tasks.
final class Flag: Sendable {
    private let state: Mutex<Bool>
    init(_ value: Bool) { state = Mutex(value) }
    var value: Bool {
        get { state.withLock { $0 } }
        set { state.withLock { $0 = newValue } }
    }
}
