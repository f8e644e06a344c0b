import Foundation
import Tributary

/// Tributary's side of the store-core measurements, through its public API.
enum TributaryBench {
    static func blogModel() throws -> ManagedObjectModel {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try ManagedObjectModel(yamlFile: root.appendingPathComponent("examples/blog/model.yml"))
    }

    static func open(_ path: String, history: Bool = false, notify: Bool = false, chain: Bool = true, objectIndex: Bool = true) throws -> PersistentStoreCoordinator {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try blogModel())
        let description = PersistentStoreDescription(url: URL(fileURLWithPath: path))
        description.persistentHistoryTracking = history
        description.historyHashChain = chain
        description.historyObjectIndex = objectIndex
        description.remoteChangeNotificationPost = notify
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

    /// Reads the four values of a post the way the raw loop does, into a checksum.
    @inline(__always)
    static func checksum(_ pk: Int64, _ title: AttributeValue, _ content: AttributeValue, _ externalID: AttributeValue, _ createdAt: AttributeValue) -> Int {
        var sum = Int(pk)
        if case .string(let s) = title { sum &+= s.utf8.count }
        if case .string(let s) = content { sum &+= s.utf8.count }
        if case .string(let s) = externalID { sum &+= s.utf8.count }
        if case .date(let d) = createdAt { sum &+= Int(d.timeIntervalSince1970) }
        return sum
    }

    /// Fetches every post and reads every value, through the row cursor (or, with
    /// `batched`, as dictionary rows delivered 1,000 at a time); returns (rows, seconds).
    static func fetchPosts(at path: String, batched: Bool = false) throws -> (Int, Double) {
        let coordinator = try open(path)
        var request = FetchRequest(entityName: "Post")
        request.propertiesToFetch = ["title", "content", "externalID", "createdAt"]
        request.fetchBatchSize = 1000
        var count = 0
        var checksum = 0
        let seconds = try Harness.time {
            if batched {
                try coordinator.enumerate(request) { batch in
                    for row in batch {
                        count += 1
                        checksum &+= Self.checksum(row.objectID.primaryKey, row[position: 0], row[position: 1], row[position: 2], row[position: 3])
                    }
                }
            } else {
                try coordinator.enumerateRows(request) { row in
                    count += 1
                    checksum &+= Self.checksum(row.primaryKey, row[position: 0], row[position: 1], row[position: 2], row[position: 3])
                }
            }
        }
        precondition(checksum != 0)
        return (count, seconds)
    }
}
