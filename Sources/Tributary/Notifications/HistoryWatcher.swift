import Foundation
import Synchronization

/// Follows a store's history: waits for remote changes, fetches the transactions after
/// its checkpoint, hands them to a handler in token order and moves the checkpoint on
/// once the handler returns (the loop of the reference talk, for any number of
/// coordinators and processes).
///
/// The checkpoint is a named consumer (``PersistentStoreCoordinator/registerHistoryConsumer(_:startingAt:)``),
/// which survives restarts, or a token in memory. Delivery is at least once: a
/// transaction is delivered again until a handler call that included it returned
/// without throwing, and a failing handler is retried with capped exponential backoff,
/// never skipping a transaction. Without a checkpoint the watcher starts at the current
/// token, or at the oldest kept history with ``Configuration/startsAtOldest``.
///
/// The work is one plain step, ``deliverPending(schemaChanges:_:)``; ``run(reporting:schemaChanges:_:)`` is a thin
/// loop that calls it at start and after each remote change.
///
/// ```swift
/// var configuration = HistoryWatcher.Configuration(consumerName: "search-index")
/// configuration.filter.excludedAuthors = ["search-index"]
/// let watcher = try HistoryWatcher(coordinator: coordinator, configuration: configuration)
/// let task = Task {
///     await watcher.run { batch in
///         try index.apply(batch)                       // throwing retries the batch
///         print(batch.objectIDNotification[.update]?.count ?? 0, "objects updated")
///     }
/// }
/// task.cancel()  // stops after the batch in hand; the consumer keeps its position
/// ```
public final class HistoryWatcher: Sendable {
    /// What a watcher follows and where it starts.
    public struct Configuration: Sendable, Equatable {
        /// The consumer holding the checkpoint (registered if new); nil keeps it in memory.
        public var consumerName: String?
        /// Where to start when there is no checkpoint yet (a new consumer, or none).
        public var startToken: PersistentHistoryToken?
        /// Start at the oldest kept history rather than the current token, when there is
        /// no checkpoint and no ``startToken``.
        public var startsAtOldest = false
        /// Which transactions to deliver: authors (exclude your own), context names,
        /// entities, change types. Its token bounds are set by the watcher.
        public var filter = HistoryFilter()
        /// The most transactions per handler call.
        public var batchSize = 500
        /// How long to wait before retrying after a failure.
        public var backoff = Backoff()

        /// A configuration with a consumer, or with an in-memory checkpoint when nil.
        ///
        /// ```swift
        /// var configuration = HistoryWatcher.Configuration(consumerName: "audit")
        /// configuration.filter.entities = ["Post"]
        /// ```
        public init(consumerName: String? = nil) {
            self.consumerName = consumerName
        }
    }

    /// The watcher's backoff: the library's one ``Tributary/Backoff``.
    public typealias Backoff = Tributary.Backoff

    /// A failed delivery, reported by ``run(reporting:schemaChanges:_:)`` before it retries.
    public struct Failure: Sendable {
        /// What the handler, the fetch or the commit threw.
        public let error: any Error
        /// Failures in a row, from 1.
        public let attempt: Int
        /// The wait before the next attempt.
        public let retryIn: Duration
    }

    /// What ``run(reporting:schemaChanges:_:)`` reports as it goes.
    public enum Event: Sendable {
        /// A remote change woke the loop.
        case woke(RemoteChange)
        /// Transactions were delivered and the checkpoint moved to `through`.
        case delivered(transactions: Int, through: PersistentHistoryToken)
        /// A delivery failed and will be retried.
        case failed(Failure)
    }

    /// The coordinator whose store is followed.
    public let coordinator: PersistentStoreCoordinator
    /// The configuration given.
    public let configuration: Configuration
    private let sleep: @Sendable (Duration) async throws -> Void
    private let follower: HistoryFollower
    /// The checkpoint, whether a delivery runs, and the chain hash the store held at the
    /// checkpoint when it was reached (to tell that an older copy of the store took its place).
    private let state: Locked<(checkpoint: PersistentHistoryToken, delivering: Bool, vouched: (token: Int64, hash: String)?)>

    /// A watcher of `coordinator`'s store, which must track history. With a consumer
    /// name, registers the consumer if it does not exist and starts after its token.
    /// `sleep` waits between retries (tests pass one that returns at once).
    ///
    /// ```swift
    /// let watcher = try HistoryWatcher(coordinator: coordinator, configuration: .init(consumerName: "audit"))
    /// ```
    public init(coordinator: PersistentStoreCoordinator, configuration: Configuration = Configuration(),
                sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }) throws {
        self.coordinator = coordinator
        self.configuration = configuration
        self.sleep = sleep
        guard configuration.batchSize > 0 else {
            throw TributaryError(.invalidInput, "a watcher's batch size must be positive", hint: "use a batch size such as 500")
        }
        let start: ConsumerStart = configuration.startToken.map { .token($0) } ?? (configuration.startsAtOldest ? .oldest : .current)
        follower = try HistoryFollower(coordinator: coordinator, consumerName: configuration.consumerName, filter: configuration.filter)
        state = Locked((try follower.start(at: start), false, nil))
    }

    /// The last token delivered (or skipped as not matching the filter): the next
    /// delivery starts after it.
    public var checkpoint: PersistentHistoryToken { state.withLock { $0.checkpoint } }

    /// Delivers every matching transaction after the checkpoint, in token order, in
    /// batches of at most ``Configuration/batchSize``; after each batch the handler
    /// returns from, moves the checkpoint (committing the consumer). When nothing more
    /// matches, the checkpoint moves to the store's token read at the start, so that
    /// a consumer does not lag behind transactions its filter leaves out. Returns the
    /// number of transactions delivered. A handler error is rethrown with the
    /// checkpoint before the failed batch. Calls must not overlap.
    ///
    /// With `schemaChanges`, schema transactions (``PersistentHistoryTransaction/schemaChange``:
    /// the store's model changed) go to it instead, one call each, in their place: the
    /// batch before one is handed over first, the batch after it only once it returned,
    /// so an app can load the new model (``SchemaChange/model``) before the changes that
    /// use it. Without it they come in the batches, with no changes.
    ///
    /// ```swift
    /// let count = try await watcher.deliverPending { batch in try apply(batch) }
    /// try await watcher.deliverPending(schemaChanges: { schema in try reload(schema.schemaChange!.model) }) { batch in try apply(batch) }
    /// ```
    @discardableResult
    public func deliverPending(schemaChanges: ((PersistentHistoryTransaction) async throws -> Void)? = nil,
                               _ handler: ([PersistentHistoryTransaction]) async throws -> Void) async throws -> Int {
        let (after, vouched) = state.withLock { state in
            precondition(!state.delivering, "Tributary: HistoryWatcher.deliverPending called while a delivery is running")
            state.delivering = true
            return (state.checkpoint, state.vouched)
        }
        defer { state.withLock { $0.delivering = false } }
        let head = try follower.head(after: after.value)
        if let vouched, vouched.token == after.value { try follower.requireHistory(hash: vouched.hash, at: vouched.token, recordedBy: "this watcher") }
        var position = after
        var delivered = 0
        while position < head {
            let batch = try follower.readTransactions(after: position, through: head, limit: configuration.batchSize)
            guard let last = batch.last else {
                try advance(to: head)
                break
            }
            for part in Self.parts(of: batch, separatingSchema: schemaChanges != nil) {
                if let schemaChanges, let schema = part.first, part.count == 1, schema.schemaChange != nil { try await schemaChanges(schema) } else { try await handler(Array(part)) }
                delivered += part.count
                try advance(to: part.last!.token)
            }
            position = last.token
            if Task.isCancelled { break }  // stop between batches; the next run continues from here
        }
        if vouched?.token != checkpoint.value { note(vouchedAt: checkpoint.value) }
        return delivered
    }

    /// The batch as handed over: whole, or with each schema transaction a part of its own.
    private static func parts(of batch: [PersistentHistoryTransaction], separatingSchema: Bool) -> [ArraySlice<PersistentHistoryTransaction>] {
        guard separatingSchema, batch.contains(where: { $0.schemaChange != nil }) else { return [batch[...]] }
        var parts: [ArraySlice<PersistentHistoryTransaction>] = []
        var start = 0
        for (i, transaction) in batch.enumerated() where transaction.schemaChange != nil {
            if i > start { parts.append(batch[start..<i]) }
            parts.append(batch[i...i])
            start = i + 1
        }
        if start < batch.count { parts.append(batch[start...]) }
        return parts
    }

    /// Listens for remote changes and delivers what they bring, until the task is
    /// cancelled. Delivers pending history first; after a failure waits the backoff and
    /// tries again, reporting it. `reporting` sees every wake, delivery and failure;
    /// `schemaChanges` gets schema transactions, as in ``deliverPending(schemaChanges:_:)``.
    ///
    /// ```swift
    /// await watcher.run(reporting: { event in
    ///     if case .failed(let failure) = event { log(failure.error) }
    /// }) { batch in try apply(batch) }
    /// ```
    public func run(reporting: @Sendable (Event) -> Void = { _ in }, schemaChanges: ((PersistentHistoryTransaction) async throws -> Void)? = nil,
                    _ handler: ([PersistentHistoryTransaction]) async throws -> Void) async {
        var waiter = CommitWaiter(coordinator)  // listen before the first fetch
        var failures = 0
        while !Task.isCancelled {
            do {
                let count = try await deliverPending(schemaChanges: schemaChanges, handler)
                failures = 0
                if count > 0 { reporting(.delivered(transactions: count, through: checkpoint)) }
            } catch {
                if Task.isCancelled { return }
                failures += 1
                let delay = configuration.backoff.delay(afterFailures: failures)
                reporting(.failed(Failure(error: error, attempt: failures, retryIn: delay)))
                do { try await sleep(delay) } catch { return }
                continue
            }
            guard let change = await waiter.nextChange() else { return }
            reporting(.woke(change))
        }
    }

    // MARK: Steps

    /// Keeps the chain hash the store holds at `token`, the checkpoint, for the next delivery
    /// to check (nothing when it cannot be read: that check is then skipped).
    private func note(vouchedAt token: Int64) {
        let hash = try? follower.chainHash(at: token)
        state.withLock { $0.vouched = hash.flatMap { $0 }.map { (token, $0) } }
    }

    /// Moves the checkpoint (and the consumer) to `token` if it is newer.
    private func advance(to token: PersistentHistoryToken) throws {
        guard token > checkpoint else { return }
        try follower.commit(through: token.value)
        state.withLock { $0.checkpoint = token }
    }
}
