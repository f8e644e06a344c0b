import Foundation
import Tributary

/// Tributary's side of the store-core measurements, through its public API.
enum TributaryBench {
    static func blogModel() throws -> ManagedObjectModel {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try ManagedObjectModel(yamlFile: root.appendingPathComponent("examples/blog/model.yml"))
    }

    static func open(_ path: String, history: Bool = false) throws -> PersistentStoreCoordinator {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try blogModel())
        var description = PersistentStoreDescription(url: URL(fileURLWithPath: path))
        description.persistentHistoryTracking = history
        try coordinator.addPersistentStore(with: description)
        return coordinator
    }

    /// The two batch-insert forms.
    enum Form { case columnar, dictionaries }

    /// Batch-inserts the workload, building each batch's values as a user would; returns seconds.
    static func insertPosts(at path: String, rows: Int = Workload.rows, batch: Int = Workload.batch, history: Bool = false, form: Form = .columnar) throws -> Double {
        let coordinator = try open(path, history: history)
        let columns = ["title", "content", "externalID", "createdAt"]
        return try Harness.time {
            var j = 0
            while j < rows {
                let end = min(j + batch, rows)
                if form == .columnar {
                    var values: [[AttributeValue]] = []
                    values.reserveCapacity(end - j)
                    for k in j..<end {
                        values.append([.string(Workload.title(k)), .string(Workload.content(k)), .string(Workload.externalID(k)), .date(Date(timeIntervalSince1970: Workload.createdAt(k)))])
                    }
                    var request = BatchInsertRequest(entityName: "Post", columns: columns, rows: values)
                    request.resultType = .statusOnly
                    try coordinator.execute(request)
                    j = end
                    continue
                }
                var objects: [[String: AttributeValue]] = []
                objects.reserveCapacity(end - j)
                for k in j..<end {
                    objects.append([
                        "title": .string(Workload.title(k)),
                        "content": .string(Workload.content(k)),
                        "externalID": .string(Workload.externalID(k)),
                        "createdAt": .date(Date(timeIntervalSince1970: Workload.createdAt(k))),
                    ])
                }
                var request = BatchInsertRequest(entityName: "Post", objects: objects)
                request.resultType = .statusOnly
                try coordinator.execute(request)
                j = end
            }
        }
    }

    /// Fetches every post as dictionary rows, streaming in batches; returns (rows, seconds).
    static func fetchPosts(at path: String) throws -> (Int, Double) {
        let coordinator = try open(path)
        var request = FetchRequest(entityName: "Post")
        request.fetchBatchSize = 1000
        var count = 0
        var checksum = 0
        let seconds = try Harness.time {
            try coordinator.enumerate(request) { batch in
                for row in batch {
                    count += 1
                    checksum &+= Int(row.objectID.primaryKey) &+ (row[position: 0].stringValue?.utf8.count ?? 0)
                }
            }
        }
        precondition(checksum != 0)
        return (count, seconds)
    }
}
