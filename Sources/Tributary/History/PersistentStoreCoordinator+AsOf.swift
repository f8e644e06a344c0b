import Foundation

extension PersistentStoreCoordinator {
    /// The rows of `request`'s entity as they were just after transaction `token`:
    /// reconstructed from the current rows and the history after the token, rolled back
    /// newest first. The predicate is evaluated in memory on the past values (its
    /// supported operators are those of ``StorePredicate/evaluate(_:)``); sort
    /// descriptors, limit and offset apply. Rows hold the attributes and to-one
    /// relationships, as a dictionary fetch does; values excluded from history keep
    /// their current value.
    ///
    /// A token older than the oldest kept history fails with ``TributaryError/Code/historyExpired``:
    /// replay an exported stream to that point instead.
    ///
    /// ```swift
    /// let lastWeek = try coordinator.historyToken(at: Date().addingTimeInterval(-7 * 86_400))
    /// let posts = try coordinator.fetch(FetchRequest(entityName: "Post"), asOf: lastWeek)
    /// ```
    public func fetch(_ request: FetchRequest, asOf token: PersistentHistoryToken) throws -> [FetchedRow] {
        let store = try requireHistoryStore()
        try token.check(belongsTo: store.identifier)
        guard request.propertiesToGroupBy == nil, !request.returnsDistinctResults, request.propertiesToFetch == nil else {
            throw TributaryError(.invalidInput, "a fetch as of a past token takes an entity, a predicate, sort descriptors, a limit and an offset only",
                                 hint: "fetch the rows as of the token, then group or pick properties from them")
        }
        try request.predicate?.checkEvaluable()
        let table = try store.schema.table(request.entityName)
        return try store.database.read { db in
            // Rolled back from the rows as they are, the past must have every write since in
            // history: a read-only open cannot fold other programs' writes (a read-write one did).
            if store.capture == nil, try CaptureLog.hasUnfoldedRowsIfLogged(on: db) == true {
                throw TributaryError(.readOnly, "other programs wrote to the store since Tributary last read its history, and a read-only open cannot record "
                                     + "their writes, so rows as of a token would show them", location: store.url.path,
                                     hint: "open it read-write (any tributary command that writes, or history) and ask again")
            }
            let pruned = try Self.prunedThrough(db)
            let newest = try db.scalar(HistorySchema.newestTokenSQL)?.integerValue ?? 0
            guard token.value >= pruned else {
                throw TributaryError(.historyExpired, "history after token \(token.value) was pruned (the oldest point kept is \(pruned)), so rows as of it cannot be rebuilt",
                                     location: store.url.path, hint: "replay an exported stream to that point: tributary replay STREAM --into copy.sqlite --until \(token)")
            }
            guard token.value <= newest else {
                throw TributaryError(.invalidInput, "token \(token.value) is after the newest transaction (\(newest))", location: store.url.path, hint: "give a token from tributary history")
            }
            var past = try PastRows(entity: table.name, after: token.value, storeID: store.identifier, on: db)
            let current = try FetchQuery(FetchRequest(entityName: table.name), schema: store.schema)
            let statement = try db.makeStatement(current.sql)
            try statement.bind(current.arguments)
            var rows: [(key: Int64, values: [AttributeValue])] = []
            let layout = current.layout
            try current.read(statement, storeID: store.identifier, batchSize: 1000) { batch in
                for row in batch {
                    if let values = past.rolledBack(row.objectID.primaryKey, current: row.values, layout: layout) { rows.append((row.objectID.primaryKey, values)) }
                }
            }
            rows += past.deletedSince(layout: layout)
            return try Self.finish(rows, request: request, layout: layout, storeID: store.identifier)
        }
    }

    /// The token of the newest transaction committed at or before `date` (value 0 when the
    /// history kept starts after it and nothing was pruned), for ``fetch(_:asOf:)``.
    public func historyToken(at date: Date) throws -> PersistentHistoryToken {
        let store = try requireHistoryStore()
        let value = try store.database.read { db -> Int64 in
            if let token = try db.scalar("SELECT max(token) FROM \(HistorySchema.transactions) WHERE timestamp <= ?", [.double(date.timeIntervalSince1970)])?.integerValue {
                return token
            }
            return try Self.prunedThrough(db)
        }
        return PersistentHistoryToken(value: value, storeID: store.identifier)
    }

    /// Filters, sorts and pages the rebuilt rows (values in `layout`'s order), as rows of one batch.
    private static func finish(_ rows: [(key: Int64, values: [AttributeValue])], request: FetchRequest, layout: RowLayout,
                               storeID: UUID) throws -> [FetchedRow] {
        var kept = rows
        if let predicate = request.predicate {
            kept = try kept.filter { try predicate.evaluate(Dictionary(uniqueKeysWithValues: zip(layout.names, $0.values))) }
        }
        let sorts = try request.sortDescriptors.map { sort -> (Int, Bool) in
            guard let index = layout.index[sort.key] else {
                throw TributaryError(.unknownProperty, "cannot sort by '\(sort.key)': \(request.entityName) has no such attribute or to-one relationship", location: "sortDescriptors",
                                     hint: "sort by one of \(layout.names.joined(separator: ", "))")
            }
            return (index, sort.ascending)
        }
        kept.sort { a, b in
            for (index, ascending) in sorts {
                let order = SQLiteOrder.compare(a.values[index], b.values[index])
                if order != 0 { return ascending ? order < 0 : order > 0 }
            }
            return a.key < b.key
        }
        if request.fetchOffset > 0 { kept.removeFirst(min(request.fetchOffset, kept.count)) }
        if request.fetchLimit > 0, kept.count > request.fetchLimit { kept.removeLast(kept.count - request.fetchLimit) }
        let batch = RowBatch(layout: layout, storeID: storeID, entityName: request.entityName, keys: kept.map(\.key), values: kept.flatMap(\.values))
        return batch.rows
    }
}

/// What the history after a token says of one entity's rows at that token: which rows
/// did not exist yet, and the earlier values of what changed since.
private struct PastRows {
    /// A row changed since the token: whether it existed at the token, and the value each
    /// changed property had then (the first `before` seen, oldest change first).
    struct Then {
        var existed: Bool
        var values: [String: AttributeValue] = [:]
    }

    private var changed: [Int64: Then] = [:]

    init(entity: String, after token: Int64, storeID: UUID, on db: Connection) throws {
        let statement = try db.makeStatement("SELECT token, payload FROM \(HistorySchema.transactions) WHERE token > ? AND instr(entities, ?) > 0 ORDER BY token")
        try statement.bind([.integer(token), .string("," + entity + ",")])
        while try statement.step() {
            let token = PersistentHistoryToken(value: statement.int64(at: 0), storeID: storeID)
            let changes = try statement.withBytes(at: 1) { try HistoryPayload.decode($0, token: token, storeID: storeID) { name, _ in name == entity } }
            for change in changes { note(change) }
        }
    }

    private mutating func note(_ change: PersistentHistoryChange) {
        let key = change.changedObjectID.primaryKey
        var then = changed[key] ?? Then(existed: change.changeType != .insert)
        defer { changed[key] = then }
        guard then.existed, change.changeType != .insert else { return }
        for property in change.properties where !property.isMembershipChange && !property.isValueExcluded && then.values[property.name] == nil {
            then.values[property.name] = property.before ?? .null
        }
    }

    /// The row `key` at the token, from its current values (in `layout`'s order); nil when it
    /// did not exist then.
    mutating func rolledBack(_ key: Int64, current: [AttributeValue], layout: RowLayout) -> [AttributeValue]? {
        guard let then = changed.removeValue(forKey: key) else { return current }
        guard then.existed else { return nil }
        var values = current
        for (name, value) in then.values {
            if let index = layout.index[name] { values[index] = value }
        }
        return values
    }

    /// The rows deleted since the token, from their tombstones.
    func deletedSince(layout: RowLayout) -> [(key: Int64, values: [AttributeValue])] {
        changed.filter(\.value.existed).map { key, then in (key, layout.names.map { then.values[$0] ?? .null }) }
    }
}
