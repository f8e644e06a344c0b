import Foundation
import GRDB

/// What a GRDB user would write for the same insert: a DatabaseQueue in WAL mode
/// with synchronous=NORMAL, one `inTransaction` per batch and a cached prepared
/// statement executed with arguments (GRDB's documented fast path for bulk inserts).
enum GRDBBaseline {
    /// A queue in WAL mode with synchronous=NORMAL and the workload's table, plus `extraSchema`.
    static func openQueue(at path: String, extraSchema: String? = nil) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: Workload.schema)
            if let extraSchema { try db.execute(sql: extraSchema) }
        }
        return queue
    }

    static func insertPosts(at path: String, rows: Int = Workload.rows, batch: Int = Workload.batch) throws -> Double {
        let queue = try openQueue(at: path)
        return try Harness.time {
            var j = 0
            while j < rows {
                let end = min(j + batch, rows)
                try queue.inTransaction { db in
                    let statement = try db.cachedStatement(sql: #"INSERT INTO "Post" ("title", "content", "externalID", "createdAt") VALUES (?, ?, ?, ?)"#)
                    for k in j..<end {
                        try statement.execute(arguments: [Workload.title(k), Workload.content(k), Workload.externalID(k), Workload.createdAt(k)])
                    }
                    return .commit
                }
                j = end
            }
        }
    }
}
