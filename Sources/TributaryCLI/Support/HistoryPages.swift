import Tributary

/// Reading history newest first, a page of tokens at a time (tokens follow each other
/// without gaps, so a page is a primary-key range), in bounded memory.
enum HistoryPages {
    /// Thrown by a handler to end an enumeration early.
    struct Enough: Error {}

    /// Calls `body` with each transaction matching `filter`, newest first, until it returns
    /// false. Objects' timelines (`filter.objectIDs`) are read whole through the object index
    /// instead: paging through every token range would query the index once a page.
    static func newestFirst(_ coordinator: PersistentStoreCoordinator, filter: HistoryFilter, pageTokens: Int64 = 256,
                            _ body: (PersistentHistoryTransaction) throws -> Bool) throws {
        guard let store = coordinator.persistentStores.first else { return }
        if !filter.objectIDs.isEmpty {
            for transaction in try coordinator.fetchHistory(.fetchHistory(withFilter: filter)).reversed() {
                guard try body(transaction) else { return }
            }
            return
        }
        let current = try coordinator.currentPersistentHistoryToken()
        let oldest = try coordinator.oldestKeptHistoryToken()
        var high = min(filter.through ?? current, current).value
        let low = max(filter.after?.value ?? oldest.value, oldest.value)
        while high > low {
            let from = max(low, high - pageTokens)
            var page = filter
            page.after = PersistentHistoryToken(value: from, storeID: store.identifier)
            page.through = PersistentHistoryToken(value: high, storeID: store.identifier)
            for transaction in try coordinator.fetchHistory(.fetchHistory(withFilter: page)).reversed() {
                guard try body(transaction) else { return }
            }
            high = from
        }
    }
}
