import Foundation
import Testing
@testable import Tributary

/// Batch inserts record their rows from the values they bind instead of reading them back
/// through the pre-update hook. The two ways must record the same thing, down to the bits of
/// every double (NaN stored as NULL, -0.0 read back as 0.0), for every attribute type,
/// to-one keys, excluded attributes and derived attributes.
@Suite struct BoundInsertHistoryTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("Owner") {
                Attribute("name", .string, optional: false)
                DerivedAttributeDescription("thingCount", .integer, derivation: "things.@count")
                Relationship("things", to: "Thing", inverse: "owner", toMany: true)
            }
            Entity("Thing") {
                Attribute("text", .string)
                Attribute("number", .integer)
                Attribute("real", .double)
                Attribute("flag", .bool)
                Attribute("when", .date)
                Attribute("identifier", .uuid)
                Attribute("blob", .binary)
                Attribute("secret", .string).excludedFromHistory()
                DerivedAttributeDescription("stamp", .date, derivation: "now()")
                Relationship("owner", to: "Owner", inverse: "things")
            }
        }
    }

    static let reals: [Double] = [0, -0.0, 1.5, -3, 3.0, .nan, .infinity, -.infinity, 1e300, 9.2e18, Double.leastNormalMagnitude / 3, .pi]

    /// Thing rows covering each type's edge values, nulls included; `owner` links to the given owners.
    static func rows(owners: [ObjectID]) -> [[String: AttributeValue]] {
        let texts = ["", "a", "héllo wörld 😀", "nul\u{0}inside", String(repeating: "long ", count: 400)]
        return (0..<60).map { i in
            var row: [String: AttributeValue] = [:]
            if i % 7 != 0 { row["text"] = .string(texts[i % texts.count]) }
            if i % 5 != 1 { row["number"] = .integer([0, -1, Int64.max, Int64.min, 42][i % 5]) }
            if i % 6 != 2 { row["real"] = .double(reals[i % reals.count]) }
            if i % 4 != 3 { row["flag"] = .bool(i % 2 == 0) }
            if i % 8 != 4 { row["when"] = .date(Date(timeIntervalSince1970: [0, -0.0, 1_700_000_000.123, -86_400.5][i % 4])) }
            if i % 3 == 0 { row["identifier"] = .uuid(UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", i))!) }
            if i % 3 == 1 { row["blob"] = .data(Data((0..<(i % 10)).map { UInt8($0 * 37 % 256) })) }
            row["secret"] = .string("s\(i)")
            if i % 2 == 0 { row["owner"] = .objectID(owners[i % owners.count]) }
            return row
        }
    }

    /// Each recorded change as text, doubles and dates by their bits, the `now()` stamp
    /// left out (it is the time of each store's own insert).
    static func recorded(_ coordinator: PersistentStoreCoordinator) throws -> [String] {
        func text(_ value: AttributeValue?) -> String {
            switch value {
            case .double(let d)?: return "double(\(d.bitPattern))"
            case .date(let d)?: return "date(\(d.timeIntervalSince1970.bitPattern))"
            case .objectID(let id)?: return "id(\(id.entityName)/\(id.primaryKey))"
            case let other?: return "\(other)"
            case nil: return "absent"
            }
        }
        return try coordinator.fetchHistory(.fetchHistory(after: nil)).flatMap { transaction in
            transaction.changes.map { change in
                let properties = change.properties.filter { $0.name != "stamp" }.map { "\($0.name)=\(text($0.before))>\(text($0.after))\($0.added.map(\.primaryKey))" }
                return "\(change.changeType) \(change.entityName)/\(change.changedObjectID.primaryKey) " + properties.joined(separator: " ")
            }
        }
    }

    static func run(boundInserts: Bool) throws -> (recorded: [String], coordinator: PersistentStoreCoordinator) {
        let description = PersistentStoreDescription.inMemory()
        description.persistentHistoryTracking = true
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model())
        try coordinator.addPersistentStore(with: description)
        coordinator.persistentStores[0].recorder.boundInserts = boundInserts
        var owners = BatchInsertRequest(entityName: "Owner", objects: [["name": "a"], ["name": "b"]])
        owners.resultType = .objectIDs
        let ownerIDs = try coordinator.execute(owners).objectIDs
        // The dictionary form, then the columnar form.
        try coordinator.execute(BatchInsertRequest(entityName: "Thing", objects: rows(owners: ownerIDs)))
        let columns = ["text", "number", "real", "when"]
        let columnar = (0..<20).map { i -> [AttributeValue] in
            [.string("c\(i)"), .integer(Int64(i)), .double(reals[i % reals.count]), .date(Date(timeIntervalSince1970: Double(i)))]
        }
        try coordinator.execute(BatchInsertRequest(entityName: "Thing", columns: columns, rows: columnar))
        return (try recorded(coordinator), coordinator)
    }

    @Test func boundInsertsRecordWhatTheHookRecords() throws {
        let bound = try Self.run(boundInserts: true)
        let hooked = try Self.run(boundInserts: false)
        #expect(bound.recorded.filter { $0.hasPrefix("insert Thing/") }.count == 60 + 20)
        #expect(bound.recorded == hooked.recorded)
        // NaN is stored as NULL, and -0.0 comes back as 0.0: the history says what the store holds.
        // Row 5 (Thing 6) gave NaN, row 1 (Thing 2) gave -0.0.
        let thing6 = try #require(bound.recorded.first { $0.hasPrefix("insert Thing/6 ") })
        #expect(thing6.contains(" real=absent>nil[]"), "\(thing6)")
        let thing2 = try #require(bound.recorded.first { $0.hasPrefix("insert Thing/2 ") })
        #expect(thing2.contains(" real=absent>double(0)[]"), "\(thing2)")
    }

    @Test func theNowStampRecordedIsTheStoredOne() throws {
        let (_, coordinator) = try Self.run(boundInserts: true)
        let stored = try coordinator.fetch(FetchRequest(entityName: "Thing")).map { ($0.objectID.primaryKey, $0["stamp"]) }
        let recorded = try coordinator.fetchHistory(.fetchHistory(after: nil)).flatMap(\.changes).filter { $0.entityName == "Thing" }
        #expect(recorded.count == stored.count)
        for (key, stamp) in stored {
            let change = try #require(recorded.first { $0.changedObjectID.primaryKey == key })
            guard case .date(let date)? = stamp else {
                Issue.record("Thing \(key) has no stamp: \(String(describing: stamp))")
                continue
            }
            #expect(change.insertedValues["stamp"] == .date(date))
            #expect(abs(date.timeIntervalSinceNow) < 60)
        }
    }

    // MARK: Batches past 64 KB, upserts within a batch, failed batches

    static func itemStore(boundInserts: Bool) throws -> PersistentStoreCoordinator {
        let model = try ManagedObjectModel {
            Entity("Item") {
                Attribute("name", .string, optional: false).unique()
                Attribute("n", .integer)
                Attribute("text", .string)
            }
        }
        let description = PersistentStoreDescription.inMemory()
        description.persistentHistoryTracking = true
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(with: description)
        coordinator.persistentStores[0].recorder.boundInserts = boundInserts
        return coordinator
    }

    /// Rows making over 64 KB of body (compressed in chunks while the batch goes on), of which
    /// the last hundred meet earlier rows of the same batch on the unique name: the upsert's
    /// update merges into the insert recorded from bound values, as it does into the hook's.
    @Test func upsertsWithinABatchMergeIntoTheInsertsRecordedFromBoundValues() throws {
        func run(boundInserts: Bool) throws -> [String] {
            let coordinator = try Self.itemStore(boundInserts: boundInserts)
            let rows = (0..<500).map { i -> [AttributeValue] in
                let k = i < 400 ? i : i - 400
                return [.string("item-\(k)"), .integer(Int64(i)), .string(String(repeating: "\(i % 10)", count: 300))]
            }
            try coordinator.execute(BatchInsertRequest(entityName: "Item", columns: ["name", "n", "text"], rows: rows))
            return try Self.recorded(coordinator)
        }
        let elsewhere = try run(boundInserts: true)
        #expect(elsewhere.count == 400)
        #expect(elsewhere.allSatisfy { $0.hasPrefix("insert Item/") })
        let first = try #require(elsewhere.first { $0.hasPrefix("insert Item/1 ") })
        #expect(first.contains("n=absent>400[]"), "\(first)")
        let untouched = try #require(elsewhere.first { $0.hasPrefix("insert Item/200 ") })
        #expect(untouched.contains("n=absent>199[]"), "\(untouched)")
        #expect(elsewhere == (try run(boundInserts: false)))
    }

    /// A batch insert that fails part way leaves no history, and the next one records only its own rows.
    @Test func aFailedBatchLeavesNoRowsBehind() throws {
        let coordinator = try Self.itemStore(boundInserts: true)
        var rows = (0..<300).map { i -> [AttributeValue] in [.string("a-\(i)"), .integer(Int64(i)), .null] }
        rows[250][0] = .null
        #expect(throws: TributaryError.self) { try coordinator.execute(BatchInsertRequest(entityName: "Item", columns: ["name", "n", "text"], rows: rows)) }
        #expect(try Self.recorded(coordinator).isEmpty)
        let next = (0..<3).map { i -> [AttributeValue] in [.string("b-\(i)"), .integer(Int64(i)), .null] }
        try coordinator.execute(BatchInsertRequest(entityName: "Item", columns: ["name", "n", "text"], rows: next))
        let recorded = try Self.recorded(coordinator)
        #expect(recorded.count == 3)
        #expect(recorded.allSatisfy { $0.contains("name=absent>b-") }, "\(recorded)")
    }
}

