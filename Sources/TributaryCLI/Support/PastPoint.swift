import Tributary

/// A point in a store's past as `query --as-of` and `restore --to` take it: a token, or
/// an ISO 8601 date (the newest transaction committed at or before it).
enum PastPoint {
    static func token(_ text: String, in coordinator: PersistentStoreCoordinator, option: String) throws -> PersistentHistoryToken {
        if let date = ISO8601.date(from: text) { return try coordinator.historyToken(at: date) }
        do {
            return try PersistentHistoryToken(parsing: text)
        } catch {
            throw TributaryError(.invalidInput, "'\(text)' is not a token or a date", location: option,
                                 hint: "give a token such as \(try coordinator.currentPersistentHistoryToken()) or an ISO 8601 date such as 2024-05-01T12:00:00Z")
        }
    }
}
