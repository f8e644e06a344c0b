import Foundation
import Tributary

/// Where `consumers add --at` and `consumers move --to` put a consumer: `oldest`, `current`,
/// a token, or an ISO 8601 date (the consumer then reads from the first transaction committed
/// at or after it). Positions past the current token or before the oldest kept history are refused.
enum ConsumerPosition {
    /// The token a consumer at `text` has committed through.
    static func token(_ text: String, in coordinator: PersistentStoreCoordinator, option: String) throws -> PersistentHistoryToken {
        let oldest = try coordinator.oldestKeptHistoryToken()
        let current = try coordinator.currentPersistentHistoryToken()
        let token: PersistentHistoryToken
        switch text.lowercased() {
        case "oldest": return oldest
        case "current": return current
        default:
            if let date = ISO8601.date(from: text) {
                var filter = HistoryFilter()
                filter.until = date
                // Tokens follow each other without gaps after the pruned ones.
                let before = try coordinator.countHistory(.fetchHistory(withFilter: filter))
                guard let store = coordinator.persistentStores.first else { return current }
                return PersistentHistoryToken(value: oldest.value + Int64(before), storeID: store.identifier)
            }
            do {
                token = try PersistentHistoryToken(parsing: text)
            } catch {
                throw TributaryError(.invalidInput, "'\(text)' is not a position", location: option, hint: "give oldest, current, a token such as \(current) or an ISO 8601 date such as 2024-05-01T12:00:00Z")
            }
        }
        guard token.storeKey == current.storeKey else {
            throw TributaryError(.invalidInput, "token \(token) belongs to another store", location: option, hint: "this store's tokens look like \(current)")
        }
        if token > current {
            throw TributaryError(.invalidInput, "token \(token) is beyond the store's current token \(current)", location: option,
                                 hint: "a consumer there would skip transactions not yet written; give current or an earlier token")
        }
        if token < oldest {
            throw TributaryError(.historyExpired, "history through \(oldest) was pruned; token \(token) is before it", location: option,
                                 hint: "give oldest (\(oldest)) or later; what was pruned can only come back from a snapshot")
        }
        return token
    }
}
