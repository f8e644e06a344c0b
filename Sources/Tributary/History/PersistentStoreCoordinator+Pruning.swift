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
        // This prune's row in the prune log, written with each batch it deletes.
        var logID: Int64?
        while true {
            let started = clock.now
            let (deleted, changes) = try store.database.write { db -> (Int, Int) in
                // The batch: the oldest `batch` transactions through `limit`, ending at `last`.
                let last = try db.scalar("SELECT max(token) FROM (SELECT token FROM \(HistorySchema.transactions) WHERE token <= ? ORDER BY token LIMIT ?)",
                                         [.integer(limit), .integer(Int64(batch))])?.integerValue
                var (deleted, changes) = (0, 0)
                if let last {
                    changes = Int(try db.scalar("SELECT coalesce(sum(changeCount), 0) FROM \(HistorySchema.transactions) WHERE token <= ?", [.integer(last)])?.integerValue ?? 0)
                    try Self.moveChainAnchor(to: last, on: db)
                    if store.history?.hasObjectIndex == true { try ObjectTimelineIndex.prune(through: last, on: db) }
                    try db.execute("DELETE FROM \(HistorySchema.transactions) WHERE token <= ?", [.integer(last)])
                    deleted = db.changes
                }
                let previous = try Self.prunedThrough(db)
                let pruned = max(previous, limit)
                if pruned > previous {
                    try db.execute("UPDATE _tributary_metadata SET value = ? WHERE key = 'historyPrunedThrough'", [.string(String(pruned))])
                }
                if deleted > 0 {
                    logID = try Self.logPrune(logID, through: pruned, transactions: result.transactions + deleted, changes: result.changes + changes, on: db)
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
        return result
    }

    /// Keeps the chain anchored (``HistoryChain``): before the transactions through `last`
    /// are deleted, `last`'s hash becomes the anchor the oldest kept one chains from.
    private static func moveChainAnchor(to last: Int64, on db: Connection) throws {
        guard try HistoryChain.anchor(on: db) != nil, let hash = try HistoryChain.point(through: last, on: db).hash else { return }
        try HistoryChain.setAnchor(hash, on: db)
    }

    /// A prune is itself recorded, in `_tributary_history_prune`, in the transaction of each
    /// batch it deletes (so the record cannot be lost while the deletion stays): when,
    /// through which token, how much went so far, and the anchor the chain now starts from.
    /// Returns the prune's row ID (`id`, nil before its first batch).
    private static func logPrune(_ id: Int64?, through: Int64, transactions: Int, changes: Int, on db: Connection) throws -> Int64 {
        let values: [AttributeValue] = [.double(Date().timeIntervalSince1970), .integer(through), .integer(Int64(transactions)), .integer(Int64(changes)),
                                        try HistoryChain.anchor(on: db).map { .data(Data($0)) } ?? .null]
        guard let id else {
            try db.execute("INSERT INTO \(HistorySchema.prunes) (prunedAt, through, transactions, changes, anchor) VALUES (?, ?, ?, ?, ?)", values)
            return db.lastInsertRowID
        }
        try db.execute("UPDATE \(HistorySchema.prunes) SET prunedAt = ?, through = ?, transactions = ?, changes = ?, anchor = ? WHERE id = ?", values + [.integer(id)])
        return id
    }
}
