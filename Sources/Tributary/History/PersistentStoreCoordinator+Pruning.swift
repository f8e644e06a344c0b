import Foundation

/// What a prune did.
public struct HistoryPruneResult: Sendable, Equatable {
    /// Transactions deleted.
    public var transactions = 0
    /// Changes in them.
    public var changes = 0
    /// The token through which history is now pruned.
    public var prunedThrough: Int64 = 0
    /// Consumers left behind (now expired).
    public var expiredConsumers: [String] = []
}

extension PersistentStoreCoordinator {
    /// Deletes history as the request says, in batches of bounded time so that
    /// concurrent writers never wait long for the lock (Core Data's `deleteHistory`).
    ///
    /// History is deleted by position only: everything up to the target, whoever wrote
    /// it, so that kept history stays one unbroken range after ``oldestKeptHistoryToken()``.
    /// A delete request with a filter (authors, context names, entities…) is refused with
    /// ``TributaryError/Code/invalidInput`` and deletes nothing; to purge only once every
    /// reader has merged, give each reader a consumer and use ``PersistentHistoryChangeRequest/deleteConsumedHistory(maximumAge:)``.
    ///
    /// ```swift
    /// try coordinator.deleteHistory(.deleteHistory(before: token))
    /// try coordinator.deleteHistory(.deleteConsumedHistory(maximumAge: 7 * 86_400))
    /// ```
    @discardableResult
    public func deleteHistory(_ request: PersistentHistoryChangeRequest, idleTimeout: TimeInterval? = nil, dryRun: Bool = false) throws -> HistoryPruneResult {
        let store = try requireHistoryStore()
        guard let target = request.deleteTarget else {
            throw TributaryError(.invalidInput, "the request does not delete anything", hint: "use PersistentHistoryChangeRequest.deleteHistory(before:) or deleteConsumedHistory()")
        }
        guard request.filter == HistoryFilter() else {
            throw TributaryError(.invalidInput, "a delete-history request cannot have a filter: history is deleted by position, for every author",
                                 hint: "remove the filter; to delete only what every reader has merged, register a consumer per reader and use deleteConsumedHistory()")
        }
        // The last token to delete.
        let (requested, behind): (Int64, [String]) = try store.database.read { db in
            switch target {
            case .token(let token):
                try token.check(belongsTo: store.identifier)
                return (token.value, [])
            case .date(let date):
                let value = try db.scalar("SELECT max(token) FROM \(HistorySchema.transactions) WHERE timestamp < ?", [.double(date.timeIntervalSince1970)])?.integerValue ?? 0
                return (value, [])
            case .consumed(let maximumAge):
                let newest = try db.scalar(HistorySchema.newestTokenSQL)?.integerValue ?? 0
                var consumed = newest
                let now = Date().timeIntervalSince1970
                let statement = try db.makeStatement("SELECT name, token, committedAt FROM \(HistorySchema.consumers)")
                var positions: [(String, Int64)] = []
                while try statement.step() {
                    let idle = idleTimeout.map { now - statement.double(at: 2) > $0 } ?? false
                    if !idle { consumed = min(consumed, statement.int64(at: 1)) }
                    positions.append((statement.string(at: 0), statement.int64(at: 1)))
                }
                var limit = consumed
                if let maximumAge {
                    let old = try db.scalar("SELECT max(token) FROM \(HistorySchema.transactions) WHERE timestamp < ?", [.double(now - maximumAge)])?.integerValue ?? 0
                    limit = max(limit, old)
                }
                return (limit, positions.filter { $0.1 < limit }.map(\.0))
            }
        }
        let newest = try currentPersistentHistoryToken().value
        let limit = min(requested, newest)
        var result = HistoryPruneResult(expiredConsumers: behind)
        if dryRun {
            try store.database.read { db in
                result.transactions = Int(try db.scalar("SELECT count(*) FROM \(HistorySchema.transactions) WHERE token <= ?", [.integer(limit)])?.integerValue ?? 0)
                result.changes = Int(try db.scalar("SELECT coalesce(sum(changeCount), 0) FROM \(HistorySchema.transactions) WHERE token <= ?", [.integer(limit)])?.integerValue ?? 0)
                result.prunedThrough = max(limit, try Self.prunedThrough(db))
            }
            return result
        }
        // Delete in batches, sizing each to take about 2 ms of the writer's time.
        var batch = 4
        let clock = ContinuousClock()
        while true {
            let started = clock.now
            let (deleted, changes) = try store.database.write { db -> (Int, Int) in
                let changes = Int(try db.scalar("SELECT coalesce(sum(changeCount), 0) FROM (SELECT changeCount FROM \(HistorySchema.transactions) WHERE token <= ? ORDER BY token LIMIT ?)", [.integer(limit), .integer(Int64(batch))])?.integerValue ?? 0)
                try Self.moveChainAnchor(pastBatch: batch, through: limit, on: db)
                try db.execute("DELETE FROM \(HistorySchema.transactions) WHERE token IN (SELECT token FROM \(HistorySchema.transactions) WHERE token <= ? ORDER BY token LIMIT ?)", [.integer(limit), .integer(Int64(batch))])
                let deleted = db.changes
                let previous = try Self.prunedThrough(db)
                let pruned = max(previous, limit)
                if pruned > previous {
                    try db.execute("UPDATE _tributary_metadata SET value = ? WHERE key = 'historyPrunedThrough'", [.string(String(pruned))])
                }
                return (deleted, changes)
            }
            result.transactions += deleted
            result.changes += changes
            if deleted < batch { break }
            // The writer lock is not fair: pause so that a waiting writer gets its turn
            // instead of the next batch taking the lock straight back.
            usleep(500)
            let elapsed = clock.now - started
            if elapsed < .milliseconds(1) { batch = min(batch * 2, 65_536) } else if elapsed > .milliseconds(4) { batch = max(1, batch / 2) }
        }
        result.prunedThrough = try store.database.read { try Self.prunedThrough($0) }
        if result.transactions > 0 { try Self.recordPrune(result, in: store) }
        return result
    }

    /// Keeps the chain anchored (``HistoryChain``): before a batch of the oldest
    /// transactions is deleted, the hash of its newest becomes the anchor the oldest kept
    /// one chains from.
    private static func moveChainAnchor(pastBatch batch: Int, through limit: Int64, on db: Connection) throws {
        guard try HistoryChain.anchor(on: db) != nil else { return }
        let newest = try db.makeStatement("""
            SELECT hash FROM (SELECT token, hash FROM \(HistorySchema.transactions) WHERE token <= ? ORDER BY token LIMIT ?) ORDER BY token DESC LIMIT 1
            """)
        try newest.bind([.integer(limit), .integer(Int64(batch))])
        guard try newest.step(), !newest.isNull(at: 0) else { return }
        try HistoryChain.setAnchor(newest.withBytes(at: 0) { Array($0) }, on: db)
    }

    /// A prune is itself recorded, in `_tributary_history_prune`: when, through which
    /// token, how much went, and the anchor the chain now starts from.
    private static func recordPrune(_ result: HistoryPruneResult, in store: PersistentStore) throws {
        try store.write { db in
            try db.execute("INSERT INTO \(HistorySchema.prunes) (prunedAt, through, transactions, changes, anchor) VALUES (?, ?, ?, ?, ?)", [
                .double(Date().timeIntervalSince1970), .integer(result.prunedThrough), .integer(Int64(result.transactions)), .integer(Int64(result.changes)),
                try HistoryChain.anchor(on: db).map { .data(Data($0)) } ?? .null,
            ])
        }
    }
}
