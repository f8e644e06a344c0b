import Foundation
import Testing
@testable import Tributary

/// Empty strings and blobs are ordinary values: SQLite hands their bytes over as a NULL
/// pointer, and the recorder once trapped comparing two of them. Every attribute type goes
/// from each of empty (or zero), NULL and a value to each other, through every capture path:
/// bound batch inserts, inserts read by the hook, batch updates and context saves.
@Suite struct EmptyValueHistoryTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("Thing") {
                Attribute("k", .integer, optional: false)
                Attribute("text", .string)
                Attribute("blob", .binary)
                Attribute("number", .integer)
                Attribute("real", .double)
                Attribute("flag", .bool)
                Attribute("when", .date)
                Attribute("identifier", .uuid)
            }
        }
    }

    enum State: CaseIterable { case empty, null, value }

    static let names = ["text", "blob", "number", "real", "flag", "when", "identifier"]

    /// The value of attribute `name` in `state`.
    static func value(_ name: String, _ state: State) -> AttributeValue {
        if state == .null { return .null }
        let empty = state == .empty
        switch name {
        case "text": return .string(empty ? "" : "x")
        case "blob": return .data(empty ? Data() : Data([1, 2]))
        case "number": return .integer(empty ? 0 : 5)
        case "real": return .double(empty ? 0 : 1.5)
        case "flag": return .bool(!empty)
        case "when": return .date(Date(timeIntervalSince1970: empty ? 0 : 1000))
        default: return .uuid(UUID(uuidString: empty ? "00000000-0000-4000-8000-000000000000" : "00000000-0000-4000-8000-000000000001")!)
        }
    }

    static func values(_ state: State) -> [String: AttributeValue] {
        Dictionary(uniqueKeysWithValues: names.map { ($0, value($0, state)) })
    }

    static let pairs: [(State, State)] = State.allCases.flatMap { a in State.allCases.map { (a, $0) } }

    static func open(boundInserts: Bool) throws -> PersistentStoreCoordinator {
        let description = PersistentStoreDescription.inMemory()
        description.persistentHistoryTracking = true
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model())
        try coordinator.addPersistentStore(with: description)
        coordinator.persistentStores[0].recorder.boundInserts = boundInserts
        return coordinator
    }

    /// The one change of the newest transaction.
    static func lastChange(_ coordinator: PersistentStoreCoordinator, after token: PersistentHistoryToken?) throws -> PersistentHistoryChange {
        let changes = try coordinator.fetchHistory(.fetchHistory(after: token)).flatMap(\.changes)
        #expect(changes.count == 1)
        return try #require(changes.last)
    }

    /// Checks that an update from `before` to `after` recorded exactly the attributes that changed.
    static func expectUpdate(_ change: PersistentHistoryChange, from before: State, to after: State, path: String) {
        #expect(change.changeType == .update, "\(path)")
        let recorded = Dictionary(uniqueKeysWithValues: change.properties.map { ($0.name, $0) })
        for name in names {
            if before == after {
                #expect(recorded[name] == nil, "\(path): \(name) did not change but was recorded")
            } else {
                #expect(recorded[name]?.before == value(name, before), "\(path): \(name) before")
                #expect(recorded[name]?.after == value(name, after), "\(path): \(name) after")
            }
        }
    }

    @Test(arguments: [true, false])
    func insertsUpdatesAndDeletesOfEmptyValues(boundInserts: Bool) throws {
        let coordinator = try Self.open(boundInserts: boundInserts)
        for (k, (before, after)) in Self.pairs.enumerated() {
            let where_ = try StorePredicate(format: "k == %@", .integer(Int64(k)))
            var token = try coordinator.currentPersistentHistoryToken()
            var row = Self.values(before)
            row["k"] = .integer(Int64(k))
            try coordinator.execute(BatchInsertRequest(entityName: "Thing", objects: [row]))
            let inserted = try Self.lastChange(coordinator, after: token)
            for name in Self.names { #expect(inserted.insertedValues[name] ?? .null == Self.value(name, before), "insert \(name) \(before)") }

            // The hook's update path, there and back, twice (the second time compares the recorded values again).
            for (from, to) in [(before, after), (after, before), (before, after)] {
                token = try coordinator.currentPersistentHistoryToken()
                try coordinator.execute(BatchUpdateRequest(entityName: "Thing", predicate: where_, propertiesToUpdate: Self.values(to)))
                if from == to {
                    let changes = try coordinator.fetchHistory(.fetchHistory(after: token)).flatMap { $0.changes }
                    #expect(changes.allSatisfy { $0.properties.isEmpty })
                } else {
                    Self.expectUpdate(try Self.lastChange(coordinator, after: token), from: from, to: to, path: "batch update \(from)→\(to)")
                }
            }

            // A context save back to `before`, then a delete: its tombstone holds the values.
            token = try coordinator.currentPersistentHistoryToken()
            let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
            let object = try #require(try context.fetch(FetchRequest(entityName: "Thing", predicate: where_)).first)
            for name in Self.names { object[name] = Self.value(name, before) }
            try context.save()
            if before != after {
                Self.expectUpdate(try Self.lastChange(coordinator, after: token), from: after, to: before, path: "context save \(after)→\(before)")
            }
            token = try coordinator.currentPersistentHistoryToken()
            context.delete(object)
            try context.save()
            let deleted = try Self.lastChange(coordinator, after: token)
            #expect(deleted.changeType == PersistentHistoryChangeType.delete)
        }
    }
}
