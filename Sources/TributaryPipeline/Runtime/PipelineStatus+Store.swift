import Foundation
import Tributary

extension PipelineStatus {
    /// The table of statuses in the source store, one row a pipeline.
    static let table = "_tributary_pipeline_state"

    /// Writes this status to `coordinator`'s store, replacing the pipeline's row (the table
    /// is made on first use).
    public func save(in coordinator: PersistentStoreCoordinator) throws {
        guard let store = coordinator.persistentStores.first else { throw TributaryError(.noStore, "the coordinator has no store") }
        try store.writeOwnTable { db in
            try db.execute("""
                CREATE TABLE IF NOT EXISTS \(Self.table) (pipeline TEXT PRIMARY KEY, consumer TEXT NOT NULL, state TEXT NOT NULL, lastError TEXT,
                process INTEGER NOT NULL, host TEXT NOT NULL, since REAL NOT NULL, heartbeat REAL NOT NULL)
                """)
            try db.execute("INSERT OR REPLACE INTO \(Self.table) (pipeline, consumer, state, lastError, process, host, since, heartbeat) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                           [.string(pipeline), .string(consumer), .string(state.rawValue), lastError.map { .string($0) } ?? .null, .integer(Int64(process)),
                            .string(host), .double(since.timeIntervalSince1970), .double(heartbeat.timeIntervalSince1970)])
        }
    }

    /// Every pipeline status kept in `coordinator`'s store, by pipeline name (none when no
    /// pipeline ever ran on it). Works on a store opened read-only.
    public static func all(in coordinator: PersistentStoreCoordinator) throws -> [PipelineStatus] {
        guard let store = coordinator.persistentStores.first else { throw TributaryError(.noStore, "the coordinator has no store") }
        return try store.readOwnTable { db in
            guard try db.hasTable(table) else { return [] }
            let statement = try db.makeStatement("SELECT pipeline, consumer, state, lastError, process, host, since, heartbeat FROM \(table) ORDER BY pipeline")
            var statuses: [PipelineStatus] = []
            while try statement.step() {
                var status = PipelineStatus(pipeline: statement.string(at: 0), consumer: statement.string(at: 1), state: State(rawValue: statement.string(at: 2)) ?? .stopped,
                                            lastError: statement.isNull(at: 3) ? nil : statement.string(at: 3))
                status.process = Int32(truncatingIfNeeded: statement.int64(at: 4))
                status.host = statement.string(at: 5)
                status.since = Date(timeIntervalSince1970: statement.double(at: 6))
                status.heartbeat = Date(timeIntervalSince1970: statement.double(at: 7))
                statuses.append(status)
            }
            return statuses
        }
    }
}
