/// What ``PersistentStoreCoordinator/verifyHistoryChain()`` found: how much history it
/// checked, the chain's head, and the first transaction whose content, order or presence
/// differs from what was written.
///
/// ```swift
/// let report = try coordinator.verifyHistoryChain()
/// if let problem = report.problem { print("history was edited at \(problem.token): \(problem)") }
/// ```
public struct HistoryChainReport: Sendable, Equatable {
    /// Whether the store's history is chained (``PersistentStoreDescription/historyHashChain``).
    public var isChained = true
    /// Transactions checked.
    public var transactions = 0
    /// Changes in them.
    public var changes = 0
    /// The oldest kept transaction's token value (0 with none).
    public var oldestToken: Int64 = 0
    /// The newest transaction's token value, or the pruned-through token with none kept.
    public var headToken: Int64 = 0
    /// The newest transaction's hash (or the anchor), 64 hex digits: an external copy of it
    /// proves later that the history up to it was not rewritten.
    public var headHash = ""
    /// The first difference, nil when the chain holds.
    public var problem: HistoryChainProblem?

    /// Throws `historyTampered` naming the first difference, or `invalidInput` when the
    /// history is not chained; `location` is the store's path.
    package func requireIntact(location: String) throws {
        if let problem {
            throw TributaryError(.historyTampered, "the history was edited: \(problem)", location: location,
                                 hint: "compare it with an exported stream or a replica, and restore the store from a copy taken before token \(problem.token)")
        }
        guard isChained else {
            throw TributaryError(.invalidInput, "the store's history is not chained (it was made with historyHashChain off)", location: location,
                                 hint: "nothing to verify; new stores chain their history by default")
        }
    }
}

/// The first place a history chain does not hold.
public struct HistoryChainProblem: Sendable, Equatable, CustomStringConvertible {
    /// What differs.
    public enum Kind: String, Sendable, Equatable {
        /// The transaction's hash does not match its content: its payload, metadata,
        /// source, token or hash was edited (or the transaction was put there).
        case altered
        /// Transactions from this token on are missing before the next one kept.
        case missing
        /// The transaction has no hash in a chained history.
        case unchained
        /// The anchor the oldest kept transaction chains from is gone.
        case anchor
    }

    /// The token value of the first transaction concerned.
    public let token: Int64
    public let kind: Kind
    /// What was found, in words.
    public let detail: String

    public var description: String { "token \(token): \(detail)" }
}
