import Foundation

/// The history tokens of saves made by the contexts of one coordinator, which reach
/// that coordinator's other contexts directly: the contexts' history watchers skip them,
/// so each such save is merged into each context exactly once.
///
/// A save marks its token inside its write transaction, before the commit (so no watcher
/// can read the transaction unmarked) and before the remote change is posted; a failed
/// commit unmarks it. Each watcher follows from a position; a mark is dropped once every
/// following watcher has passed it (soon when none follows, since a watcher made later
/// starts after the current token).
final class LocalCommits: Sendable {
    private struct State {
        var tokens: Set<Int64> = []
        /// Each following watcher's position (`Int64.min` until it knows its start).
        var followers: [UUID: Int64] = [:]
    }

    private let state = Locked(State())

    /// Starts following: call before reading the watcher's start token.
    func follow() -> UUID {
        let id = UUID()
        state.withLock { $0.followers[id] = .min }
        return id
    }

    /// Stops following.
    func unfollow(_ id: UUID) {
        state.withLock { state in
            state.followers[id] = nil
            Self.prune(&state)
        }
    }

    /// The watcher `id` has merged or skipped everything through `token`.
    func passed(_ id: UUID, through token: Int64) {
        state.withLock { state in
            guard let position = state.followers[id], token > position else { return }
            state.followers[id] = token
            Self.prune(&state)
        }
    }

    /// Marks a token in the writer lock, before its commit. With no watcher following,
    /// the earlier marks (all committed: the writer lock orders them) can go, but not this
    /// one: a watcher starting now may read a start token from before this commit.
    func mark(_ token: Int64) {
        state.withLock { state in
            if state.followers.isEmpty { state.tokens.removeAll(keepingCapacity: true) }
            state.tokens.insert(token)
        }
    }

    func unmark(_ token: Int64) {
        state.withLock { _ = $0.tokens.remove(token) }
    }

    /// Whether a context of this coordinator committed `token`.
    func contains(_ token: Int64) -> Bool {
        state.withLock { $0.tokens.contains(token) }
    }

    private static func prune(_ state: inout State) {
        guard let oldest = state.followers.values.min() else {
            // Keep the newest mark: its transaction may not have committed yet.
            if state.tokens.count > 1, let newest = state.tokens.max() { state.tokens = [newest] }
            return
        }
        if state.tokens.contains(where: { $0 <= oldest }) { state.tokens = state.tokens.filter { $0 > oldest } }
    }
}
