import Foundation
import Tributary

/// Live results (issue 10): a controller reporting a 100-object change against a full refetch.
enum FetchedResultsBenchmarks {
    static let objects = 100_000
    static let changed = 100

    static func update() throws -> [Measurement] {
        try Harness.withDirectory { dir in
            let path = dir.appendingPathComponent("frc.sqlite").path
            _ = try TributaryBench.insertPosts(at: path, rows: objects)
            let coordinator = try TributaryBench.open(path)
            let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
            let request = FetchRequest(entityName: "Post", sortDescriptors: [SortDescriptor("title")])
            let controller = try FetchedResultsController(fetchRequest: request, managedObjectContext: context)
            try controller.performFetch()
            var generator = SplitMix(seed: 7)
            var round = 0
            var reported = 0
            let times = try Harness.interleaved(rounds: 5, [
                {
                    // 100 posts renamed in the store (not timed), then merged: the controller reports.
                    round += 1
                    let externalIDs = (0..<changed).map { _ in AttributeValue.string(Workload.externalID(Int(generator.next() % UInt64(objects)))) }
                    var update = BatchUpdateRequest(entityName: "Post", predicate: try StorePredicate(format: "externalID IN %@", .array(externalIDs)), propertiesToUpdate: ["title": .string("Renamed \(round)")])
                    update.resultType = .objectIDs
                    let ids = try coordinator.execute(update).objectIDs
                    let seconds = Harness.time {
                        context.mergeChanges(fromContextDidSave: ContextDidSave(updatedObjectIDs: Set(ids)))
                    }
                    reported += controller.fetchedObjectIDs.count == objects ? 1 : 0
                    return seconds
                },
                { try Harness.time { try controller.performFetch() } },
            ])
            precondition(reported > 0)
            return [Measurement(name: "frc_update_vs_refetch", value: times[0] / times[1], unit: "ratio", goal: "<= 0.1",
                                details: [("update_ms", times[0] * 1000), ("refetch_ms", times[1] * 1000), ("objects", objects), ("changed", changed),
                                          ("update_path", "mergeChanges(fromContextDidSave:) with 100 updated IDs: the controller reads them and reports the difference"),
                                          ("refetch_path", "performFetch(): the same request over all objects"), ("statistic", "best of 5, interleaved")])]
        }
    }
}
