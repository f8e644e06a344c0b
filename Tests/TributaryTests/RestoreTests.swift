import Foundation
import Testing
@testable import Tributary

/// `restore` sets rows back as a new transaction (issue 24): changed rows get their
/// values back, rows deleted since come back, rows inserted since go, and history keeps
/// everything, the restore included.
@Suite struct RestoreTests {
    let coordinator: PersistentStoreCoordinator

    init() throws {
        let description = PersistentStoreDescription.inMemory()
        description.persistentHistoryTracking = true
        coordinator = try Fixtures.blogCoordinator(description)
    }

    func tags() throws -> [String: String?] {
        Dictionary(uniqueKeysWithValues: try coordinator.fetch(FetchRequest(entityName: "Tag")).map { ($0["name"]!.stringValue!, $0["color"]?.stringValue) })
    }

    @Test func rowsComeBackAsTheyWereInOneTransaction() throws {
        var seed = BatchInsertRequest(entityName: "Tag", objects: [["name": "swift", "color": "orange"], ["name": "sqlite", "color": "blue"], ["name": "linux"]])
        seed.resultType = .objectIDs
        let ids = try coordinator.execute(seed).objectIDs
        let point = try coordinator.currentPersistentHistoryToken()
        let before = try tags()

        var recolor = BatchUpdateRequest(entityName: "Tag", propertiesToUpdate: ["color": "red"])
        recolor.objectIDs = [ids[0], ids[2]]
        try coordinator.execute(recolor)
        var delete = BatchDeleteRequest(entityName: "Tag")
        delete.objectIDs = [ids[1]]
        try coordinator.execute(delete)
        try coordinator.execute(BatchInsertRequest(entityName: "Tag", objects: [["name": "rust"]]))
        #expect(try tags() != before)
        let written = try coordinator.currentPersistentHistoryToken()

        let result = try coordinator.restore(entityName: "Tag", to: point, reason: "undo the recolouring")
        #expect(result == RestoreResult(updated: 2, reinserted: 1, deleted: 1))
        #expect(try tags() == before)
        let restoring = try coordinator.fetchHistory(.fetchHistory(after: written))
        #expect(restoring.count == 1 && restoring[0].author == "restore" && restoring[0].reason == "undo the recolouring")
        #expect(try coordinator.verifyHistoryChain().problem == nil)
        #expect(try coordinator.restore(entityName: "Tag", to: point) == RestoreResult(), "a second restore finds nothing to do")
    }

    @Test func aPredicateLimitsTheRestoreToTheRowsItMatchedThen() throws {
        try coordinator.execute(BatchInsertRequest(entityName: "Tag", objects: [["name": "swift", "color": "orange"], ["name": "sqlite", "color": "blue"]]))
        let point = try coordinator.currentPersistentHistoryToken()
        try coordinator.execute(BatchUpdateRequest(entityName: "Tag", propertiesToUpdate: ["color": "red"]))
        let result = try coordinator.restore(entityName: "Tag", predicate: try StorePredicate(format: "color == 'orange'"), to: point)
        #expect(result.updated == 1)
        #expect(try tags() == ["swift": "orange", "sqlite": "red"])
    }
}
