import Foundation
import Testing
@testable import Tributary

/// Batch inserts fed by a `managedObjectHandler` (Core Data's
/// `NSBatchInsertRequest(entity:managedObjectHandler:)`), through the dictionary handler's path.
@Suite struct BatchInsertObjectHandlerTests {
    final class Quake: ManagedObject, EntityNamed, @unchecked Sendable {
        static let entityName = "Quake"
        @Managed("code") var code: String
        @Managed("place") var place: String
        @Managed("magnitude") var magnitude: Double
    }

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity(Quake.self) {
                Attribute("code", .string, optional: false).unique()
                Attribute("place", .string, optional: false, default: "somewhere")
                Attribute("magnitude", .double, optional: false, default: 0)
                Relationship("region", to: "Region", inverse: "quakes")
            }
            Entity("Region") {
                Attribute("name", .string, optional: false)
                Relationship("quakes", to: "Quake", inverse: "region", toMany: true)
            }
        }
    }

    private func coordinator(_ description: PersistentStoreDescription) throws -> PersistentStoreCoordinator {
        description.persistentHistoryTracking = true
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model())
        try coordinator.addPersistentStore(with: description)
        return coordinator
    }

    private func quakes(_ coordinator: PersistentStoreCoordinator) throws -> [[String: AttributeValue]] {
        var request = FetchRequest(entityName: "Quake", sortDescriptors: [SortDescriptor("code")])
        request.propertiesToFetch = ["code", "place", "magnitude"]
        return try coordinator.fetch(request).map(\.dictionary)
    }

    @Test func typedObjectsStreamInOneTransactionUnderTheContextsAuthor() throws {
        let dir = TemporaryDirectory()
        let coordinator = try coordinator(PersistentStoreDescription(url: dir.file("q.sqlite")))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        context.transactionAuthor = "feed"
        let start = try coordinator.currentPersistentHistoryToken()
        var index = 0
        var request = BatchInsertRequest(entityName: "Quake", objects: [])
        request.resultType = .objectIDs
        let result = try context.execute(request, managedObjectHandler: { (quake: Quake) in
            guard index < 2_500 else { return true }
            quake.code = "q\(index)"
            quake.magnitude = Double(index % 10)
            index += 1
            return false
        })
        #expect(result.inserted == 2_500 && result.objectIDs.count == 2_500)
        #expect(try coordinator.count(for: FetchRequest(entityName: "Quake")) == 2_500)
        let rows = try quakes(coordinator)
        #expect(rows.first == ["code": "q0", "place": "somewhere", "magnitude": 0.0])   // unset: the default
        #expect(rows.contains(["code": "q2499", "place": "somewhere", "magnitude": 9.0]))
        let transactions = try coordinator.fetchHistory(.fetchHistory(after: start))
        #expect(transactions.count == 1 && transactions.first?.author == "feed")
    }

    @Test func onlyTheValuesSetAreWrittenOverAMatchingRow() throws {
        let coordinator = try coordinator(.inMemory())
        try coordinator.execute(BatchInsertRequest(entityName: "Quake", objects: [["code": "q1", "place": "Lima", "magnitude": 1.0]]))
        var codes = ["q1", "q2"].makeIterator()
        let result = try coordinator.execute(BatchInsertRequest(entityName: "Quake", objects: []), managedObjectHandler: { (object: ManagedObject) in
            guard let code = codes.next() else { return true }
            #expect(object is Quake)   // the entity's class, from the model
            try object.setValue(.string(code), forKey: "code")
            try object.setValue(.double(7), forKey: "magnitude")
            return false
        })
        #expect(result.inserted == 1 && result.updated == 1)
        #expect(try quakes(coordinator) == [["code": "q1", "place": "Lima", "magnitude": 7.0], ["code": "q2", "place": "somewhere", "magnitude": 7.0]])
    }

    @Test func toOneRelationshipsInTheRowAreSetOthersRefused() throws {
        let coordinator = try coordinator(.inMemory())
        var regions = BatchInsertRequest(entityName: "Region", objects: [["name": "Asia"]])
        regions.resultType = .objectIDs
        let asia = try #require(try coordinator.execute(regions).objectIDs.first)
        var done = false
        try coordinator.execute(BatchInsertRequest(entityName: "Quake", objects: []), managedObjectHandler: { (quake: Quake) in
            if done { return true }
            quake.code = "tokyo"
            try quake.setValue(.objectID(asia), forKey: "region")
            done = true
            return false
        })
        var request = FetchRequest(entityName: "Quake")
        request.propertiesToFetch = ["region.name"]
        #expect(try coordinator.fetch(request).map(\.dictionary) == [["region.name": "Asia"]])

        let refused = try #require(throws: TributaryError.self) {
            try coordinator.execute(BatchInsertRequest(entityName: "Region", objects: []), managedObjectHandler: { (region: ManagedObject) in
                try region.setValue("Europe", forKey: "name")
                try region.setValue(.array([]), forKey: "quakes")
                return false
            })
        }
        #expect(refused.message.contains("cannot set 'quakes'"))
        #expect(try coordinator.count(for: FetchRequest(entityName: "Region")) == 1)
    }

    @Test func aFailingHandlerOrObjectWritesNothing() throws {
        let coordinator = try coordinator(.inMemory())
        struct Broken: Error {}
        var calls = 0
        #expect(throws: Broken.self) {
            try coordinator.execute(BatchInsertRequest(entityName: "Quake", objects: []), managedObjectHandler: { (quake: Quake) in
                calls += 1
                if calls > 1_500 { throw Broken() }   // after one chunk of 1,000 was inserted
                quake.code = "q\(calls)"
                return false
            })
        }
        #expect(try coordinator.count(for: FetchRequest(entityName: "Quake")) == 0)
        // An object missing a required value is refused like a dictionary missing it.
        var first = true
        #expect(throws: TributaryError.self) {
            try coordinator.execute(BatchInsertRequest(entityName: "Quake", objects: []), managedObjectHandler: { (quake: Quake) in
                defer { first = false }
                if first { quake.magnitude = 1 }
                return !first
            })
        }
        #expect(try coordinator.count(for: FetchRequest(entityName: "Quake")) == 0)
        // A typed handler of another entity is refused before anything runs.
        let mismatch = try #require(throws: TributaryError.self) {
            try coordinator.execute(BatchInsertRequest(entityName: "Region", objects: []), managedObjectHandler: { (_: Quake) in true })
        }
        #expect(mismatch.message.contains("Quake"))
    }
}
