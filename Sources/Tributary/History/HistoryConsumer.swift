import Foundation

/// A named, persistent cursor in a store's history, after PostgreSQL's
/// replication slots: pruning with `.consumed` never removes what a consumer has
/// not committed.
///
/// ```swift
/// try coordinator.registerHistoryConsumer("search-index")
/// let consumer = try coordinator.historyConsumer(named: "search-index")
/// let batch = try coordinator.fetchHistory(.fetchHistory(after: consumer.token))
/// try coordinator.commitHistoryConsumer("search-index", through: batch.last!.token)
/// ```
public struct HistoryConsumer: Sendable, Equatable {
    /// Where a consumer stands, in the manner of PostgreSQL's `wal_status`.
    public enum State: String, Sendable, Codable {
        /// Within the warning lag.
        case current
        /// Behind by more than the warning lag.
        case lagging
        /// Its next transaction was pruned (or it idled past the timeout): it must resynchronise.
        case expired
    }

    /// The consumer's name.
    public let name: String
    /// The last token it committed; it reads after this.
    public let token: PersistentHistoryToken
    /// When it last committed.
    public let committedAt: Date
    /// When it was registered.
    public let createdAt: Date
    /// Transactions after its token.
    public let lagTransactions: Int
    /// How long the oldest transaction it has not read has waited, in seconds, now
    /// (0 when it has read everything): a single unread transaction raises it.
    public let lagSeconds: TimeInterval
    /// Its state.
    public let state: State
}

/// Where a new consumer starts.
public enum ConsumerStart: Sendable, Equatable {
    /// At the current token: it sees only what commits from now on.
    case current
    /// At the oldest kept history.
    case oldest
    /// After a given token.
    case token(PersistentHistoryToken)
}
