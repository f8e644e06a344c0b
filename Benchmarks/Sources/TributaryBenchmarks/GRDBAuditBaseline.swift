import Foundation
import GRDB

/// What a GRDB user would write to keep an audit table: a transaction observer
/// notes each changed row, and before the transaction commits the app reads
/// those rows and records each, with its values as JSON, in a history table.
/// (GRDB's observer callbacks may not touch the connection, so the recording is
/// done by the write closure, in the same transaction.)
enum GRDBAuditBaseline {
    final class ChangeCollector: TransactionObserver, @unchecked Sendable {
        // @unchecked Sendable: GRDB calls it on the writer's queue only.
        var events: [(table: String, rowID: Int64, kind: DatabaseEvent.Kind)] = []

        func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { eventKind.tableName != "audit" }
        func databaseDidChange(with event: DatabaseEvent) { events.append((event.tableName, event.rowID, event.kind)) }
        func databaseDidCommit(_ db: Database) { events.removeAll(keepingCapacity: true) }
        func databaseDidRollback(_ db: Database) { events.removeAll(keepingCapacity: true) }
    }

    static func insertPosts(at path: String, rows: Int = Workload.rows, batch: Int = Workload.batch) throws -> Double {
        let queue = try GRDBBaseline.openQueue(at: path, extraSchema: "CREATE TABLE audit (id INTEGER PRIMARY KEY, txTime REAL NOT NULL, tableName TEXT NOT NULL, rowID INTEGER NOT NULL, kind TEXT NOT NULL, \"values\" TEXT)")
        let collector = ChangeCollector()
        queue.add(transactionObserver: collector, extent: .databaseLifetime)
        return try Harness.time {
            var j = 0
            while j < rows {
                let end = min(j + batch, rows)
                try queue.inTransaction { db in
                    let insert = try db.cachedStatement(sql: #"INSERT INTO "Post" ("title", "content", "externalID", "createdAt") VALUES (?, ?, ?, ?)"#)
                    for k in j..<end {
                        try insert.execute(arguments: [Workload.title(k), Workload.content(k), Workload.externalID(k), Workload.createdAt(k)])
                    }
                    // Record every changed row with its values before committing.
                    let now = Date().timeIntervalSince1970
                    let select = try db.cachedStatement(sql: #"SELECT * FROM "Post" WHERE "_pk" = ?"#)
                    let audit = try db.cachedStatement(sql: "INSERT INTO audit (txTime, tableName, rowID, kind, \"values\") VALUES (?, ?, ?, ?, ?)")
                    for event in collector.events {
                        var json = "{"
                        if let row = try Row.fetchOne(select, arguments: [event.rowID]) {
                            var first = true
                            for (column, value) in row {
                                json += (first ? "\"" : ",\"") + column + "\":"
                                first = false
                                switch value.storage {
                                case .null: json += "null"
                                case .int64(let i): json += String(i)
                                case .double(let d): json += String(d)
                                case .string(let s): json += "\"" + s.replacingOccurrences(of: "\"", with: "\\\"") + "\""
                                case .blob(let b): json += "\"" + b.base64EncodedString() + "\""
                                }
                            }
                        }
                        json += "}"
                        try audit.execute(arguments: [now, event.table, event.rowID, "\(event.kind)", json])
                    }
                    return .commit
                }
                j = end
            }
        }
    }
}
