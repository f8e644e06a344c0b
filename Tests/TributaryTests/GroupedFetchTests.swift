import Foundation
import Testing
@testable import Tributary

/// Aggregates in `propertiesToFetch`, `propertiesToGroupBy`, `havingPredicate` and
/// `returnsDistinctResults`, as Core Data's dictionary fetches have them.
@Suite struct GroupedFetchTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("Quake") {
                Attribute("code", .string, optional: false).unique()
                Attribute("place", .string, optional: false)
                Attribute("magnitude", .double, optional: false, default: 0)
                Attribute("depth", .integer)
                Attribute("time", .date, optional: false)
                Relationship("region", to: "Region", inverse: "quakes")
            }
            Entity("Region") {
                Attribute("name", .string, optional: false).unique()
                Relationship("quakes", to: "Quake", inverse: "region", toMany: true)
            }
        }
    }

    /// Tokyo 4, 5, 6 (depths 10, 20, 30) in Asia; Lima 3 (depth 5) and Oslo 2, 2.5 (depths 1, nil) in Elsewhere.
    private func seeded(_ dir: TemporaryDirectory) throws -> PersistentStoreCoordinator {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model())
        try coordinator.addPersistentStore(with: PersistentStoreDescription(url: dir.file("q.sqlite")))
        var regions = BatchInsertRequest(entityName: "Region", objects: [["name": "Asia"], ["name": "Elsewhere"]])
        regions.resultType = .objectIDs
        let ids = try coordinator.execute(regions).objectIDs
        let rows: [(String, Double, AttributeValue, Int)] = [
            ("Tokyo", 4, 10, 0), ("Tokyo", 5, 20, 0), ("Tokyo", 6, 30, 0), ("Lima", 3, 5, 1), ("Oslo", 2, 1, 1), ("Oslo", 2.5, .null, 1),
        ]
        try coordinator.execute(BatchInsertRequest(entityName: "Quake", objects: rows.enumerated().map { i, row in
            ["code": .string("q\(i)"), "place": .string(row.0), "magnitude": .double(row.1), "depth": row.2,
             "time": .date(Date(timeIntervalSince1970: 1_000 + Double(i))), "region": .objectID(ids[row.3])]
        }))
        return coordinator
    }

    private func grouped(_ properties: [String], by groupBy: [String], sort: [Tributary.SortDescriptor] = [Tributary.SortDescriptor("place")]) -> FetchRequest {
        var request = FetchRequest(entityName: "Quake", sortDescriptors: sort)
        request.resultType = .dictionary
        request.propertiesToGroupBy = groupBy
        request.propertiesToFetch = properties
        return request
    }

    @Test func groupsWithAggregatesTypedAsCoreDataTypesThem() throws {
        let dir = TemporaryDirectory()
        let coordinator = try seeded(dir)
        let request = grouped(["place", "@count", "@sum.magnitude", "@avg.magnitude", "max:(magnitude)", "count:(depth)", "sum:(depth)", "min:(time)", "average:(depth)"], by: ["place"])
        let rows = try coordinator.fetch(request).map(\.dictionary)
        #expect(rows == [
            ["place": "Lima", "@count": .integer(1), "@sum.magnitude": .double(3), "@avg.magnitude": .double(3), "max:(magnitude)": .double(3),
             "count:(depth)": .integer(1), "sum:(depth)": .integer(5), "min:(time)": .date(Date(timeIntervalSince1970: 1_003)), "average:(depth)": .double(5)],
            ["place": "Oslo", "@count": .integer(2), "@sum.magnitude": .double(4.5), "@avg.magnitude": .double(2.25), "max:(magnitude)": .double(2.5),
             "count:(depth)": .integer(1), "sum:(depth)": .integer(1), "min:(time)": .date(Date(timeIntervalSince1970: 1_004)), "average:(depth)": .double(1)],
            ["place": "Tokyo", "@count": .integer(3), "@sum.magnitude": .double(15), "@avg.magnitude": .double(5), "max:(magnitude)": .double(6),
             "count:(depth)": .integer(3), "sum:(depth)": .integer(60), "min:(time)": .date(Date(timeIntervalSince1970: 1_000)), "average:(depth)": .double(20)],
        ])
        // Rows of groups stand for no object.
        #expect(try coordinator.fetch(request).allSatisfy { $0.objectID.primaryKey == 0 })
    }

    @Test func havingFiltersGroupsAndSortingTakesAggregates() throws {
        let dir = TemporaryDirectory()
        let coordinator = try seeded(dir)
        var request = grouped(["place", "@count"], by: ["place"], sort: [SortDescriptor("@count", ascending: false)])
        request.havingPredicate = try StorePredicate(format: "@count >= 2")
        #expect(try coordinator.fetch(request).map(\.dictionary) == [["place": "Tokyo", "@count": 3], ["place": "Oslo", "@count": 2]])
        // An aggregate the rows do not show, by its function form, with an argument.
        request.havingPredicate = try StorePredicate(format: "%K > %@ AND place != %@", "average:(magnitude)", 2.2, "Tokyo")
        #expect(try coordinator.fetch(request).map(\.dictionary) == [["place": "Oslo", "@count": 2], ["place": "Lima", "@count": 1]])
        request.havingPredicate = try StorePredicate(format: "@sum.depth > 10")
        #expect(try coordinator.fetch(request).compactMap { $0["place"]?.stringValue } == ["Tokyo"])
        // The predicate filters rows before grouping; limit and offset apply to groups.
        request.havingPredicate = nil
        request.predicate = try StorePredicate(format: "magnitude >= 2.5")
        request.fetchLimit = 2
        #expect(try coordinator.fetch(request).map(\.dictionary) == [["place": "Tokyo", "@count": 3], ["place": "Lima", "@count": 1]])
        request.fetchOffset = 2
        #expect(try coordinator.fetch(request).map(\.dictionary) == [["place": "Oslo", "@count": 1]])
    }

    @Test func groupsByAToOneKeyPathThroughAContextsGeneration() throws {
        let dir = TemporaryDirectory()
        let coordinator = try seeded(dir)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        try context.setQueryGenerationFrom(.current)
        let request = grouped(["region.name", "@count", "@max.magnitude"], by: ["region.name"], sort: [SortDescriptor("region.name")])
        let expected: [[String: AttributeValue]] = [["region.name": "Asia", "@count": 3, "@max.magnitude": 6.0], ["region.name": "Elsewhere", "@count": 3, "@max.magnitude": 3.0]]
        #expect(try context.fetchRows(request).map(\.dictionary) == expected)
        try coordinator.execute(BatchInsertRequest(entityName: "Quake", objects: [["code": "late", "place": "Lima", "magnitude": 9.0, "time": .date(Date())]]))
        #expect(try context.fetchRows(request).map(\.dictionary) == expected)   // the pinned generation
        #expect(try coordinator.fetch(request).count == 3)                        // the store now: a group of no region
    }

    @Test func aggregatesWithoutGroupsMakeOneRow() throws {
        let dir = TemporaryDirectory()
        let coordinator = try seeded(dir)
        var request = FetchRequest(entityName: "Quake")
        request.resultType = .dictionary
        request.propertiesToFetch = ["@count", "@sum.magnitude", "@avg.magnitude", "@sum.depth", "@max.time"]
        #expect(try coordinator.fetch(request).map(\.dictionary) == [
            ["@count": 6, "@sum.magnitude": 22.5, "@avg.magnitude": 3.75, "@sum.depth": 66, "@max.time": .date(Date(timeIntervalSince1970: 1_005))],
        ])
        // Over no rows, as Core Data: counts and sums 0, the rest nil.
        request.predicate = try StorePredicate(format: "magnitude > 100")
        #expect(try coordinator.fetch(request).map(\.dictionary) == [["@count": 0, "@sum.magnitude": 0.0, "@avg.magnitude": .null, "@sum.depth": 0, "@max.time": .null]])
    }

    @Test func toManyKeyPathsTakeSumAndAverage() throws {
        let dir = TemporaryDirectory()
        let coordinator = try seeded(dir)
        var request = FetchRequest(entityName: "Region", sortDescriptors: [SortDescriptor("name")])
        request.propertiesToFetch = ["name", "quakes.@sum.magnitude", "quakes.@avg.depth", "quakes.@sum.depth"]
        #expect(try coordinator.fetch(request).map(\.dictionary) == [
            ["name": "Asia", "quakes.@sum.magnitude": 15.0, "quakes.@avg.depth": 20.0, "quakes.@sum.depth": 60],
            ["name": "Elsewhere", "quakes.@sum.magnitude": 7.5, "quakes.@avg.depth": 3.0, "quakes.@sum.depth": 6],
        ])
        request.predicate = try StorePredicate(format: "quakes.@avg.magnitude > 4")
        #expect(try coordinator.fetch(request).compactMap { $0["name"]?.stringValue } == ["Asia"])
    }

    @Test func aHavingPredicateTakesASubqueryOverEachGroupsRows() throws {
        let dir = TemporaryDirectory()
        let coordinator = try seeded(dir)
        var request = FetchRequest(entityName: "Region", sortDescriptors: [SortDescriptor("name")])
        request.resultType = .dictionary
        request.propertiesToGroupBy = ["name"]
        request.propertiesToFetch = ["name", "@count"]
        request.havingPredicate = try StorePredicate(format: "@count == 1 AND %K != 'x' AND SUBQUERY(quakes, $q, $q.magnitude > 4).@count == 0", "max:(name)")
        #expect(try coordinator.fetch(request).map(\.dictionary) == [["name": "Elsewhere", "@count": 1]])
        // Inside the subquery, a group's aggregate is no key of the members.
        request.havingPredicate = try StorePredicate(format: "SUBQUERY(quakes, $q, @count > 1).@count > 0")
        let error = try #require(throws: TributaryError.self) { try coordinator.fetch(request) }
        #expect(error.message.contains("unknown key '@count'"), "\(error)")
    }

    @Test func distinctResultsReturnEachCombinationOnce() throws {
        let dir = TemporaryDirectory()
        let coordinator = try seeded(dir)
        var request = FetchRequest(entityName: "Quake", sortDescriptors: [SortDescriptor("place", ascending: false)])
        request.resultType = .dictionary
        request.propertiesToFetch = ["place"]
        #expect(try coordinator.fetch(request).count == 6)
        request.returnsDistinctResults = true
        #expect(try coordinator.fetch(request).map(\.dictionary) == [["place": "Tokyo"], ["place": "Oslo"], ["place": "Lima"]])
        request.propertiesToFetch = ["place", "region"]
        request.fetchLimit = 1
        let first = try #require(try coordinator.fetch(request).first)
        guard case .objectID(let region)? = first["region"] else { Issue.record("no region in \(first.dictionary)"); return }
        #expect(first["place"] == "Tokyo" && region.entityName == "Region")
    }

    @Test func coreDataRulesAreClearErrors() throws {
        let dir = TemporaryDirectory()
        let coordinator = try seeded(dir)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        func failure(_ request: FetchRequest, in context: ManagedObjectContext? = nil) throws -> TributaryError {
            try #require(throws: TributaryError.self) {
                if let context { _ = try context.fetch(request) } else { _ = try coordinator.fetch(request) }
            }
        }
        var objects = grouped(["place", "@count"], by: ["place"])
        objects.resultType = .managedObject
        #expect(try failure(objects).message.contains("propertiesToGroupBy needs dictionary results"))
        #expect(try failure(objects, in: context).hint?.contains("fetchRows") == true)
        #expect(try failure(grouped(["place", "magnitude"], by: ["place"])).message.contains("'magnitude' is fetched from groups"))
        var ungroupedAggregate = grouped(["place", "@count"], by: [])
        ungroupedAggregate.propertiesToGroupBy = nil
        #expect(try failure(ungroupedAggregate).message.contains("'place' is fetched from groups"))
        var having = grouped(["@count"], by: [])
        having.havingPredicate = try StorePredicate(format: "@count > 1")
        #expect(try failure(having).message.contains("no propertiesToGroupBy"))
        var distinct = FetchRequest(entityName: "Quake")
        distinct.resultType = .dictionary
        distinct.returnsDistinctResults = true
        #expect(try failure(distinct).message.contains("needs propertiesToFetch"))
        #expect(try failure(grouped(["place", "@sum.place"], by: ["place"])).message.contains("not a number"))
        #expect(try failure(grouped(["@count"], by: ["@count"])).message.contains("cannot group by"))
        #expect(throws: TributaryError.self) { try coordinator.count(for: grouped(["place"], by: ["place"])) }
        // A plain fetch does not read aggregates as key paths.
        var plain = FetchRequest(entityName: "Quake")
        plain.predicate = try StorePredicate(format: "@count > 1")
        #expect(throws: TributaryError.self) { try coordinator.fetch(plain) }
    }

    @Test func expressionSpellingsParse() {
        #expect(FetchExpression("@count") == FetchExpression(function: .count, keyPath: nil))
        #expect(FetchExpression("@avg.magnitude") == FetchExpression(function: .average, keyPath: ["magnitude"]))
        #expect(FetchExpression("sum:(region.size)") == FetchExpression(function: .sum, keyPath: ["region", "size"]))
        #expect(FetchExpression("count:( code )") == FetchExpression(function: .count, keyPath: ["code"]))
        for text in ["@sum", "@median.x", "median:(x)", "sum:()", "sum:(x", "title", "tags.@count"] {
            #expect(FetchExpression(text) == nil, "\(text)")
        }
    }
}
