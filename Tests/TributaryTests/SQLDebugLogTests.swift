import Foundation
import Logging
import Synchronization
import Testing
@testable import Tributary

/// A log handler that keeps every record, for assertions.
struct CapturingLogHandler: LogHandler {
    struct Record: Sendable {
        let level: Logger.Level
        let message: String
        let metadata: Logger.Metadata
    }

    final class Box: Sendable {
        let records = Mutex<[Record]>([])
        var messages: [String] { records.withLock { $0.map(\.message) } }
    }

    let box: Box
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let record = Record(level: event.level, message: event.message.description, metadata: metadata.merging(event.metadata ?? [:]) { $1 })
        box.records.withLock { $0.append(record) }
    }
}

@Suite struct SQLDebugLogTests {
    func coordinator(level: SQLDebugLog.Level, box: CapturingLogHandler.Box) throws -> PersistentStoreCoordinator {
        let description = PersistentStoreDescription.inMemory()
        description.sqlDebug = SQLDebugLog(level: level, logger: Logger(label: "test.sql") { _ in CapturingLogHandler(box: box) })
        return try Fixtures.blogCoordinator(description)
    }

    @Test func statementsOfAContextSaveAreLogged() throws {
        let box = CapturingLogHandler.Box()
        let coordinator = try coordinator(level: .values, box: box)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let tag = try context.insertNewObject(forEntityName: "Tag")
        tag["name"] = "from-a-context"
        let before = box.records.withLock { $0.count }
        try context.save()
        let messages = box.records.withLock { Array($0[before...]) }.map(\.message)
        #expect(messages.first?.hasSuffix("BEGIN IMMEDIATE") == true)
        #expect(messages.contains { $0.contains("INSERT INTO \"Tag\"") && $0.contains("from-a-context") })
        #expect(messages.last?.hasSuffix("COMMIT") == true)
    }

    @Test func statementsOfAWriteAreLoggedWithDurations() throws {
        let box = CapturingLogHandler.Box()
        let coordinator = try coordinator(level: .statements, box: box)
        let before = box.records.withLock { $0.count }
        try coordinator.execute(BatchInsertRequest(entityName: "Tag", objects: [["name": "swift"]]))
        let records = box.records.withLock { Array($0[before...]) }
        let messages = records.map(\.message)
        #expect(messages.first?.hasSuffix("BEGIN IMMEDIATE") == true)
        #expect(messages.last?.hasSuffix("COMMIT") == true)
        let insert = try #require(records.first { $0.message.contains("INSERT INTO \"Tag\"") })
        #expect(insert.message.contains("VALUES (?, ?)"))
        #expect(!insert.message.contains("swift"), "level 1 shows placeholders, not values")
        #expect(insert.level == .debug)
        #expect(insert.metadata["duration_ms"].map { Double("\($0)") != nil } == true)
        #expect(insert.metadata["store"] != nil)
        #expect(insert.message.range(of: #"^\[\d+\.\d{3} ms\] "#, options: .regularExpression) != nil)
    }

    @Test func levelTwoShowsBoundValues() throws {
        let box = CapturingLogHandler.Box()
        let coordinator = try coordinator(level: .values, box: box)
        try coordinator.execute(BatchInsertRequest(entityName: "Tag", objects: [["name": "swift"]]))
        _ = try coordinator.count(for: FetchRequest(entityName: "Tag", predicate: try StorePredicate(format: "name == %@", "swift")))
        let messages = box.messages
        #expect(messages.contains { $0.contains("INSERT INTO \"Tag\"") && $0.contains("VALUES ('swift', 'gray')") })
        #expect(messages.contains { $0.contains("SELECT count(*) FROM \"Tag\" t0 WHERE") && $0.contains("'swift'") })
    }

    @Test func offLogsNothingAndTheEnvironmentSetsTheLevel() throws {
        let box = CapturingLogHandler.Box()
        let coordinator = try coordinator(level: .off, box: box)
        try coordinator.execute(BatchInsertRequest(entityName: "Tag", objects: [["name": "swift"]]))
        #expect(box.messages.isEmpty)
        #expect(SQLDebugLog.fromEnvironment([:]).level == .off)
        #expect(SQLDebugLog.fromEnvironment(["TRIBUTARY_SQL_DEBUG": "1"]).level == .statements)
        #expect(SQLDebugLog.fromEnvironment(["TRIBUTARY_SQL_DEBUG": "2"]).level == .values)
        #expect(SQLDebugLog.fromEnvironment(["TRIBUTARY_SQL_DEBUG": "yes"]).level == .off)
        #expect(SQLDebugLog.fromEnvironment(["TRIBUTARY_SQL_DEBUG": "1"]).logger.label == "tributary.sql")
    }
}
