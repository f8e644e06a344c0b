import Foundation

extension PersistentStoreCoordinator {
    /// The model in force just after `token`: the model of the newest schema transaction at
    /// or before it, or the model schema history began with. A stream's record at `token`
    /// conforms to it; a replay to `token` builds it.
    ///
    /// ```swift
    /// let then = try coordinator.model(at: token)
    /// print(then.entities.map(\.name))
    /// ```
    public func model(at token: PersistentHistoryToken) throws -> ManagedObjectModel {
        let store = try requireHistoryStore()
        try token.check(belongsTo: store.identifier)
        let model = try store.database.read { db in try SchemaHistory.model(at: token.value, on: db) }
        guard let model else {
            throw TributaryError(.historyNotTracked, "the store's history keeps no models (history format \(store.historyFormat ?? 0))", location: store.url.path,
                                 hint: "open it read-write once with this Tributary to upgrade its history")
        }
        return model
    }

    /// The schema transactions after `after` (all when nil) through `through` (the newest
    /// when nil), in token order, with the model after each.
    ///
    /// ```swift
    /// for event in try coordinator.schemaChanges(after: lastToken) { print(event.token, event.change.summary) }
    /// ```
    public func schemaChanges(after: PersistentHistoryToken? = nil, through: PersistentHistoryToken? = nil) throws -> [SchemaChangeEvent] {
        var filter = HistoryFilter()
        filter.after = after
        filter.through = through
        filter.schemaChanges = .only
        var events: [SchemaChangeEvent] = []
        try enumerateHistoryChanges(.fetchHistory(withFilter: filter), schema: { events.append($0) }) { _ in }
        return events
    }
}
