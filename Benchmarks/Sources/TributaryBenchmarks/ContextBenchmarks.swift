import Foundation
import Tributary

/// The contexts' measurements (issue 3): saving new objects through a context
/// and faulting objects by ID, each against the C API doing the same rows.
enum ContextBenchmarks {
    /// Objects faulted by ID.
    static let faults = 100_000

    static func save() throws -> [Measurement] {
        let n = Double(Workload.rows)
        let times = try Harness.interleaved([
            { Harness.withDirectory { RawSQLite.insertPosts(at: $0.appendingPathComponent("raw.sqlite").path) } },
            { try Harness.withDirectory { try insertThroughContext(at: $0.appendingPathComponent("c.sqlite").path) } },
        ])
        let (raw, context) = (n / times[0], n / times[1])
        return [Measurement(name: "context_save_vs_raw", value: context / raw, unit: "ratio", goal: ">= 0.6",
                            details: [("context_objects_per_s", context), ("raw_rows_per_s", raw), ("rows", Workload.rows), ("objects_per_save", Workload.batch),
                                      ("context_path", "insertNewObject + 4 subscripts set, save() every 1,000, reset() after each save"),
                                      ("statistic", "best of 3, interleaved"), ("peak_rss_mb", Harness.peakRSSMegabytes())])]
    }

    /// Inserts the workload through a context, saving every `Workload.batch` objects; returns seconds.
    static func insertThroughContext(at path: String) throws -> Double {
        let coordinator = try TributaryBench.open(path)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        return try Harness.time {
            try context.performAndWait {
                for k in 0..<Workload.rows {
                    let post = try context.insertNewObject(forEntityName: "Post")
                    post["title"] = .string(Workload.title(k))
                    post["content"] = .string(Workload.content(k))
                    post["externalID"] = .string(Workload.externalID(k))
                    post["createdAt"] = .date(Date(timeIntervalSince1970: Workload.createdAt(k)))
                    if (k + 1) % Workload.batch == 0 {
                        try context.save()
                        context.reset()
                    }
                }
                try context.save()
            }
        }
    }

    static func faultByID() throws -> [Measurement] {
        try Harness.withDirectory { dir in
            let path = dir.appendingPathComponent("faults.sqlite").path
            _ = try TributaryBench.insertPosts(at: path)
            // The same pseudo-random keys for both sides.
            var generator = SplitMix(seed: 42)
            let keys = (0..<faults).map { _ in Int64(generator.next() % UInt64(Workload.rows)) + 1 }
            let coordinator = try TributaryBench.open(path)
            let storeID = coordinator.persistentStores[0].identifier
            let ids = keys.map { ObjectID(storeID: storeID, entityName: "Post", primaryKey: $0) }
            var checksum = 0
            let times = try Harness.interleaved([
                { RawSQLite.selectByID(at: path, ids: keys) },
                {
                    let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
                    return try Harness.time {
                        try context.performAndWait {
                            for id in ids {
                                let post = try context.object(with: id)
                                checksum &+= post["title"].stringValue?.utf8.count ?? 0
                            }
                        }
                    }
                },
            ])
            precondition(checksum != 0)
            let raw = Double(faults) / times[0], context = Double(faults) / times[1]
            return [Measurement(name: "fault_by_id_vs_raw", value: context / raw, unit: "ratio", goal: ">= 0.5",
                                details: [("context_faults_per_s", context), ("raw_selects_per_s", raw), ("faults", faults), ("rows", Workload.rows),
                                          ("context_path", "object(with:) then one value read (fires the fault: every column loaded)"),
                                          ("raw_path", "prepared SELECT … WHERE _pk = ?, every column read into Swift values"),
                                          ("statistic", "best of 3, interleaved, a fresh context each round")])]
        }
    }
}

/// A small deterministic generator, so both sides read the same keys.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
