import Foundation

/// The one way to follow a store's history: read what comes after a position in steps
/// bounded in transactions or changes, commit a consumer through what was delivered, and
/// (with ``CommitWaiter``) wait for the next commit. Every follower delegates to it: the
/// ``HistoryWatcher`` (and through it a context's remote merges), the pipeline runner, the
/// stream exporter and `export --to -`. Each keeps its own position as a value and decides
/// when to commit; the follower holds no state of its own.
///
/// ```swift
/// let follower = try HistoryFollower(coordinator: coordinator, consumerName: "audit")
/// var after = try follower.start(at: .oldest).value
/// let head = try follower.head(after: after)
/// let step = try follower.readChanges(after: after, through: head, limit: 10_000) { view in deliver(view) }
/// after = step.caughtUp ? head.value : step.completeThrough ?? after
/// try follower.commit(through: after)
/// ```
package struct HistoryFollower: Sendable {
    /// The coordinator whose store is followed.
    package let coordinator: PersistentStoreCoordinator
    /// The consumer whose token is the durable position; nil keeps the position in memory only.
    package let consumerName: String?
    /// Which history to read; its token bounds are set by each read.
    package let filter: HistoryFilter
    /// The store's identifier, for the tokens the follower makes.
    package let storeID: UUID

    /// A follower of `coordinator`'s store, which must track history.
    package init(coordinator: PersistentStoreCoordinator, consumerName: String? = nil, filter: HistoryFilter = HistoryFilter()) throws {
        self.init(coordinator: coordinator, storeID: try coordinator.requireHistoryStore().identifier, consumerName: consumerName, filter: filter)
    }

    /// A follower of the store `storeID` of `coordinator`; its reads fail when the store
    /// does not track history.
    package init(coordinator: PersistentStoreCoordinator, storeID: UUID, consumerName: String?, filter: HistoryFilter) {
        self.coordinator = coordinator
        self.consumerName = consumerName
        self.filter = filter
        self.storeID = storeID
    }

    /// The rule for a complete position, in one place: the newest token all of whose
    /// records come at or before a record of transaction `token`. A change may have more
    /// of its transaction after it, so that is the token before; a snapshot object sits
    /// after every change of its token, so that is its own. Once everything through a
    /// position is delivered, a consumer may be committed through this token.
    package static func completeToken(_ token: Int64, isSnapshot: Bool) -> Int64 {
        isSnapshot ? token : token - 1
    }

    /// Where following starts: the consumer's token, registering it at `start` when it is
    /// new; without a consumer, `start` itself.
    package func start(at start: ConsumerStart) throws -> PersistentHistoryToken {
        if let consumerName { return try coordinator.registerHistoryConsumer(consumerName, startingAt: start).token }
        switch start {
        case .token(let token): return token
        case .oldest: return try coordinator.oldestKeptHistoryToken()
        case .current: return try coordinator.currentPersistentHistoryToken()
        }
    }

    /// The store's newest token: a step reads through the head read before it, so that
    /// what it reports as caught up is exact. A head before `position` (what the caller has
    /// delivered through) means the store's history went back (another copy of the file, an
    /// older one, took its place): following on would wait for tokens the store hands out
    /// again to other transactions, and skip them, so it throws `historyTampered` (naming
    /// `follower`, what delivered through `position`).
    package func head(after position: Int64, deliveredBy follower: String = "this follower") throws -> PersistentHistoryToken {
        let head = try coordinator.currentPersistentHistoryToken()
        guard head.value >= position else {
            throw TributaryError(.historyTampered, "the store's history ends at token \(head.value), before token \(position), which \(follower) has delivered: the store was replaced by an older copy (restored from a backup?), or its newest history was removed",
                                 location: try coordinator.requireHistoryStore().url.path,
                                 hint: "follow it again from a position it holds (a new consumer, or export to a new directory with --snapshot), or put back the store's newest copy")
        }
        return head
    }

    /// The chain hash (hex) the store holds at `token`, for ``requireHistory(hash:at:recordedBy:)``
    /// to check later; nil when it holds none there (not chained, not a transaction's token).
    package func chainHash(at token: Int64) throws -> String? {
        try coordinator.historyChainHash(at: token).map(Hex.string)
    }

    /// Checks that the store still holds chain hash `hash` (hex) at `token`, where `source`
    /// (a stream, a watcher) recorded it: `historyTampered` when it holds another, the store's
    /// history having been replaced or edited since. A token pruned since is not checked.
    package func requireHistory(hash: String, at token: Int64, recordedBy source: String) throws {
        guard let held = try chainHash(at: token), held != hash else { return }
        throw TributaryError(.historyTampered, "the store's history through token \(token) differs from what \(source) recorded there: the store was replaced by another copy (restored from a backup?), or its history was edited",
                             location: try coordinator.requireHistoryStore().url.path,
                             hint: "follow it again from a position it holds (a new consumer, or export to a new directory with --snapshot), or put back the copy it was following")
    }

    /// What one ``readChanges(after:through:resumingAfter:limit:schema:gaps:_:)`` step read.
    package struct ChangeStep: Sendable {
        /// Changes handed over.
        package var count = 0
        /// The token and index of the newest change handed over.
        package var newest: (token: Int64, index: Int)?
        /// Whether it read every matching change through ``through``.
        package var caughtUp = true
        /// When it stopped at the limit: the newest transaction it handed over whole (the
        /// next change belongs to a later one), through which a consumer may be committed.
        package var completeThrough: Int64?
        /// The head it read through.
        package let through: PersistentHistoryToken
    }

    private struct EnoughRead: Error {}

    /// Hands `body` the matching changes after token `after` through `through`, in order,
    /// skipping those at or before `resumeAfter` (a step that stopped inside a transaction),
    /// at most `limit` of them. With `schema`, each schema transaction goes to it in its
    /// place, and with `gaps` each capture gap, each counted as one change at index 0 of its token.
    package func readChanges(after: Int64, through: PersistentHistoryToken, resumingAfter resumeAfter: (token: Int64, index: Int)? = nil,
                             limit: Int = .max, schema: ((SchemaChangeEvent) throws -> Void)? = nil, gaps: ((CaptureGapEvent) throws -> Void)? = nil,
                             _ body: (HistoryChangeView) throws -> Void) throws -> ChangeStep {
        var step = ChangeStep(newest: resumeAfter, through: through)
        guard through.value > after else { return step }
        var filter = self.filter
        filter.after = PersistentHistoryToken(value: after, storeID: storeID)
        filter.through = through
        do {
            func hand(_ token: Int64, _ index: Int, _ deliver: () throws -> Void) throws {
                if let resumeAfter, (token, index) <= resumeAfter { return }
                if step.count >= limit {
                    if let newest = step.newest, token > newest.token { step.completeThrough = newest.token }
                    throw EnoughRead()
                }
                try deliver()
                step.count += 1
                step.newest = (token, index)
            }
            func handSchema(_ event: SchemaChangeEvent) throws {
                if let schema { try hand(event.token.value, 0) { try schema(event) } }
            }
            func handGap(_ event: CaptureGapEvent) throws {
                if let gaps { try hand(event.token.value, 0) { try gaps(event) } }
            }
            // Not escaping: a closure that escaped with `step` would box it, and every change
            // would pay for the box's exclusivity checks.
            try withoutActuallyEscaping(handSchema) { handSchema in
                try withoutActuallyEscaping(handGap) { handGap in
                    try coordinator.enumerateHistoryChanges(.fetchHistory(withFilter: filter), schema: schema == nil ? nil : handSchema,
                                                            gaps: gaps == nil ? nil : handGap) { view in
                        try hand(view.token.value, view.index) { try body(view) }
                    }
                }
            }
        } catch is EnoughRead {
            step.caughtUp = false
        }
        return step
    }

    /// The first matching transactions after `after` through `through`, at most `limit`.
    package func readTransactions(after: PersistentHistoryToken, through: PersistentHistoryToken, limit: Int) throws -> [PersistentHistoryTransaction] {
        var filter = self.filter
        filter.after = after
        filter.through = through
        var request = PersistentHistoryChangeRequest.fetchHistory(withFilter: filter)
        request.fetchBatchSize = limit
        var first: [PersistentHistoryTransaction] = []
        do {
            try coordinator.enumerateHistory(request) { batch in
                first = batch
                throw EnoughRead()
            }
        } catch is EnoughRead {}
        return first
    }

    /// Commits the consumer through `token`, once everything through it was delivered
    /// (nothing without a consumer). The consumer takes `token` as it is: a caller commits
    /// forward only, keeping what it committed (a position is never moved back).
    package func commit(through token: Int64) throws {
        guard let consumerName, token > 0 else { return }
        try coordinator.commitHistoryConsumer(consumerName, through: PersistentHistoryToken(value: token, storeID: storeID))
    }
}
