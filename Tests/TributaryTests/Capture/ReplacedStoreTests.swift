import Foundation
import Testing
@testable import Tributary
import TributaryTestSupport

/// A store put back from an older copy (`.restore` of a backup) hands out tokens it had
/// handed out before to other transactions. A watcher that has delivered through token 2
/// must not take the new token 2 for the one it delivered, and skip to 3.
@Suite struct ReplacedStoreTests {
    let dir = TemporaryDirectory()
    var path: URL { dir.file("app.db") }

    /// Before the fix, the watcher delivered only the new token 3 (`v7`): the new
    /// transactions 1 and 2 (`v5`, `v6`) were skipped without a word.
    @Test func aWatcherWhosePositionNowHoldsAnotherTransactionStops() async throws {
        try ForeignWriter.shell(path, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT);")
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        let coordinator = try Fixtures.adoptedCoordinator(path)
        let watcher = try HistoryWatcher(coordinator: coordinator)
        let backup = dir.file("old.db").path
        try ForeignWriter.shell(path, ".backup '\(backup)'")
        try ForeignWriter.shell(path, "INSERT INTO t VALUES (2, 'v2');")
        try ForeignWriter.shell(path, "INSERT INTO t VALUES (3, 'v3');")
        #expect(try await watcher.deliverPending { _ in } == 2)
        #expect(watcher.checkpoint.value == 2)
        try ForeignWriter.shell(path, ".restore '\(backup)'")
        for id in 5...7 { try ForeignWriter.shell(path, "INSERT INTO t VALUES (\(id), 'v\(id)');") }
        var delivered: [String] = []
        let error = await #expect(throws: TributaryError.self) {
            try await watcher.deliverPending { batch in delivered += batch.flatMap(\.changes).compactMap { $0.insertedValues["v"]?.stringValue } }
        }
        #expect(error?.code == .historyTampered && error?.message.contains("differs from what this watcher recorded there") == true, "\(String(describing: error))")
        #expect(delivered.isEmpty)
    }
}
