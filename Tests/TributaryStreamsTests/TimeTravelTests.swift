import Foundation
import TributaryTestSupport
import Testing
import Tributary
@testable import TributaryStreams

/// Rows as of a past token, rebuilt from the current rows and the history after it, equal a
/// replay of the stream to the same token (issue 24).
@Suite struct TimeTravelTests {
    /// Every entity's rows, as `fetch(_:asOf:)` gives them (attributes and to-one
    /// relationships), store IDs and values derived with now() left out, in a stable order.
    static func rows(_ coordinator: PersistentStoreCoordinator, asOf token: PersistentHistoryToken?) throws -> [String] {
        guard let model = coordinator.managedObjectModel else { return [] }
        var lines: [String] = []
        for entity in model.entities {
            let local = Set(entity.attributes.filter { $0.derivation == .now }.map(\.name))
            let request = FetchRequest(entityName: entity.name)
            for row in try token.map({ try coordinator.fetch(request, asOf: $0) }) ?? coordinator.fetch(request) {
                let values = row.keys.filter { !local.contains($0) }.map { key -> String in
                    switch row[key] {
                    case .objectID(let id)?: return "\(key)=\(id.entityName)/p\(id.primaryKey)"
                    case let value?: return "\(key)=\(value)"
                    case nil: return "\(key)=-"
                    }
                }
                lines.append("\(entity.name)/p\(row.objectID.primaryKey) " + values.joined(separator: " "))
            }
        }
        return lines.sorted()
    }

    @Test func rowsAsOfEveryTokenEqualAReplayToIt() throws {
        let temp = TemporaryDirectory()
        let source = try StreamFixtures.source(in: temp.url)
        var tokens = try StreamFixtures.workload(source)
        tokens += try StreamFixtures.workload(source, rounds: 2, prefix: "b-")
        let stream = temp.child("stream")
        _ = try ReplayTests.export(source, to: stream)
        let replayer = try StreamReplayer(directory: stream)
        var compared = 0
        for (i, token) in tokens.enumerated() {
            let replica = try replayer.openTarget(at: temp.child("at-\(i).sqlite"))
            _ = try replayer.replay(into: replica, until: .token(token))
            let rebuilt = try Self.rows(source, asOf: token)
            #expect(rebuilt == (try Self.rows(replica, asOf: nil)), "as of \(token)")
            compared += rebuilt.count
        }
        #expect(compared > 300, "every step of both workloads, with their rows")
        #expect(try Self.rows(source, asOf: tokens.last!) == Self.rows(source, asOf: nil), "as of the newest token: the current rows")
    }

    @Test func aPredicateSortAndLimitApplyToThePastValues() throws {
        let temp = TemporaryDirectory()
        let source = try StreamFixtures.source(in: temp.url)
        let tokens = try StreamFixtures.workload(source, rounds: 1)
        let beforeEdits = tokens[2]
        try source.execute(BatchUpdateRequest(entityName: "Post", propertiesToUpdate: ["title": "Renamed"]))
        var request = FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "title BEGINSWITH 'Post 1'"))
        request.sortDescriptors = [SortDescriptor("externalID", ascending: false)]
        request.fetchLimit = 2
        #expect(try source.fetch(request).isEmpty, "no title begins so now")
        let past = try source.fetch(request, asOf: beforeEdits)
        #expect(past.map { $0["externalID"] } == [.string("ext-11"), .string("ext-10")])
        #expect(past.map { $0["title"] } == [.string("Post 11"), .string("Post 10")])
    }

    @Test func aPointBeforeTheKeptHistoryIsRefusedWithTheWayOut() throws {
        let temp = TemporaryDirectory()
        let source = try StreamFixtures.source(in: temp.url)
        let tokens = try StreamFixtures.workload(source, rounds: 1)
        _ = try source.deleteHistory(.deleteHistory(before: tokens[3]))
        #expect(throws: Never.self) { try source.fetch(FetchRequest(entityName: "Post"), asOf: tokens[3]) }
        do {
            _ = try source.fetch(FetchRequest(entityName: "Post"), asOf: tokens[1])
            Issue.record("a pruned point was read")
        } catch let error as TributaryError {
            #expect(error.code == .historyExpired && error.hint?.contains("tributary replay") == true, "\(error)")
        }
    }
}
