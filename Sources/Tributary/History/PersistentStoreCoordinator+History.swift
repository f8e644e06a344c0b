import Foundation

extension PersistentStoreCoordinator {
    /// The token of the newest history transaction (Core Data's `currentPersistentHistoryToken`);
    /// value 0 before any.
    ///
    /// ```swift
    /// let token = try coordinator.currentPersistentHistoryToken()
    /// ```
    public func currentPersistentHistoryToken() throws -> PersistentHistoryToken {
        let store = try requireHistoryStore()
        let value = try store.database.read { db in
            try db.scalar(HistorySchema.newestTokenSQL)?.integerValue ?? 0
        }
        return PersistentHistoryToken(value: value, storeID: store.identifier)
    }

    /// The oldest token still kept: requests after an older one fail with `historyExpired`.
    public func oldestKeptHistoryToken() throws -> PersistentHistoryToken {
        let store = try requireHistoryStore()
        return PersistentHistoryToken(value: try store.database.read { try Self.prunedThrough($0) }, storeID: store.identifier)
    }

    /// The transactions matching `request`, all in memory; see ``enumerateHistory(_:_:)`` to stream.
    ///
    /// ```swift
    /// let transactions = try coordinator.fetchHistory(.fetchHistory(after: token))
    /// ```
    public func fetchHistory(_ request: PersistentHistoryChangeRequest) throws -> [PersistentHistoryTransaction] {
        var all: [PersistentHistoryTransaction] = []
        try enumerateHistory(request) { all += $0 }
        return all
    }

    /// The changes matching `request`, in token then change order.
    public func fetchHistoryChanges(_ request: PersistentHistoryChangeRequest) throws -> [PersistentHistoryChange] {
        var changes: [PersistentHistoryChange] = []
        try enumerateHistory(request) { batch in for transaction in batch { changes += transaction.changes } }
        return changes
    }

    /// The number of transactions matching `request` (counting only those with a matching change
    /// when the filter names entities, change types or objects).
    public func countHistory(_ request: PersistentHistoryChangeRequest) throws -> Int {
        let store = try requireHistoryStore()
        if !request.filter.filtersChanges {
            let query = try HistoryQuery(request.filter, storeID: store.identifier, objectIndex: store.history?.hasObjectIndex ?? false)
            return try store.database.read { db in
                try Self.checkNotExpired(request.filter, db: db, store: store)
                return Int(try db.scalar("SELECT count(*) FROM \(HistorySchema.transactions)\(query.whereSQL)", query.arguments)?.integerValue ?? 0)
            }
        }
        var count = 0
        var onlyTransactions = request
        onlyTransactions.resultType = .transactionsAndChanges
        try enumerateHistory(onlyTransactions) { count += $0.count }
        return count
    }

    /// Streams matching transactions in token order, from one consistent snapshot and in
    /// bounded memory: a batch holds at most `fetchBatchSize` transactions and, past its first
    /// transaction, at most ``maximumChangesPerHistoryBatch`` changes.
    ///
    /// ```swift
    /// var request = PersistentHistoryChangeRequest.fetchHistory(after: nil)
    /// request.fetchBatchSize = 1000
    /// try coordinator.enumerateHistory(request) { transactions in … }
    /// ```
    public func enumerateHistory(_ request: PersistentHistoryChangeRequest, _ body: ([PersistentHistoryTransaction]) throws -> Void) throws {
        let store = try requireHistoryStore()
        let batchSize = request.fetchBatchSize > 0 ? request.fetchBatchSize : 500
        let decodeChanges = request.resultType != .transactionsOnly && request.resultType != .count
        let filter = request.filter
        let objectKeys = Set(filter.objectIDs.map { "\($0.entityName)/\($0.primaryKey)" })
        let storeID = store.identifier
        var batch: [PersistentHistoryTransaction] = []
        var changesInBatch = 0
        try stepHistory(filter, store: store) { statement, token, db in
            let schemaChange = statement.int64(at: 4) == Int64(SchemaHistory.source.processID) ? try SchemaHistory.change(at: token.value, on: db) : nil
            var changes: [PersistentHistoryChange] = []
            if decodeChanges {
                changes = try statement.withBytes(at: 7) { bytes in
                    try HistoryPayload.decode(bytes, token: token, storeID: storeID, filter: filter.accepts)
                }
                if !objectKeys.isEmpty {
                    changes.removeAll { !objectKeys.contains("\($0.changedObjectID.entityName)/\($0.changedObjectID.primaryKey)") }
                }
                if filter.filtersChanges && changes.isEmpty && !(schemaChange != nil && filter.keepsSchemaTransactions) { return }
            }
            var transaction = PersistentHistoryTransaction(
                token: token,
                timestamp: Date(timeIntervalSince1970: statement.double(at: 1)),
                author: statement.isNull(at: 2) ? nil : statement.string(at: 2),
                contextName: statement.isNull(at: 3) ? nil : statement.string(at: 3),
                processID: Int32(truncatingIfNeeded: statement.int64(at: 4)),
                processName: statement.string(at: 5),
                reason: statement.isNull(at: 8) ? nil : statement.string(at: 8),
                storeID: storeID,
                changeCount: Int(statement.int64(at: 6)),
                changes: changes)
            transaction.schemaChange = schemaChange
            batch.append(transaction)
            changesInBatch += changes.count
            if batch.count == batchSize || changesInBatch >= Self.maximumChangesPerHistoryBatch {
                try body(batch)
                batch.removeAll(keepingCapacity: true)
                changesInBatch = 0
            }
        }
        if !batch.isEmpty { try body(batch) }
    }

    /// Steps through the changes matching `request` one at a time, in token then change
    /// order, decoding each change's properties only when the closure reads them: the
    /// fastest way to read much history.
    ///
    /// ```swift
    /// try coordinator.enumerateHistoryChanges(.fetchHistory(after: token)) { change in
    ///     change.forEachProperty { name, before, after in … }
    /// }
    /// ```
    public func enumerateHistoryChanges(_ request: PersistentHistoryChangeRequest, _ body: (HistoryChangeView) throws -> Void) throws {
        try enumerateHistoryChanges(request, schema: nil, body)
    }

    /// ``enumerateHistoryChanges(_:_:)`` that also hands `schema` each schema transaction
    /// (a change of the model) and `gaps` each capture gap (writes by other programs that may
    /// be missing, ``CaptureGapEvent``), in its place among the changes: a follower that must
    /// apply model changes in order (a stream, a mirror) or tell its readers of a gap reads
    /// them all in one pass. Without `schema` or `gaps`, those transactions are skipped (they
    /// have no changes).
    ///
    /// ```swift
    /// try coordinator.enumerateHistoryChanges(request, schema: { event in migrate(to: event.change.model) }) { change in … }
    /// ```
    public func enumerateHistoryChanges(_ request: PersistentHistoryChangeRequest, schema: ((SchemaChangeEvent) throws -> Void)?,
                                        gaps: ((CaptureGapEvent) throws -> Void)? = nil, _ body: (HistoryChangeView) throws -> Void) throws {
        let store = try requireHistoryStore()
        let filter = request.filter
        let objectKeys = Set(filter.objectIDs.map { "\($0.entityName)/\($0.primaryKey)" })
        let storeID = store.identifier
        try stepHistory(filter, store: store) { statement, token, db in
            if try Self.handMarker(statement, token: token, keepsSchema: filter.keepsSchemaTransactions, schema: schema, gaps: gaps, on: db) { return }
            let timestamp = Date(timeIntervalSince1970: statement.double(at: 1))
            let author = statement.isNull(at: 2) ? nil : statement.string(at: 2)
            let contextName = statement.isNull(at: 3) ? nil : statement.string(at: 3)
            let reason = statement.isNull(at: 8) ? nil : statement.string(at: 8)
            let chainHash = statement.isNull(at: 9) ? nil : statement.withBytes(at: 9) { Array($0) }
            let (bytes, names, start) = try statement.withBytes(at: 7) { stored -> ([UInt8], [String], ByteReader) in
                try HistoryPayload.open(stored)
            }
            var reader = start
            guard !bytes.isEmpty else { return }
            let count = try reader.count()
            for index in 0..<count {
                let header = try HistoryPayload.changeHeader(&reader, names: names)
                let offset = reader.offset
                try HistoryPayload.skipProperties(&reader, count: header.propertyCount)
                guard filter.accepts(entity: header.entity, type: header.type), objectKeys.isEmpty || objectKeys.contains("\(header.entity)/\(header.key)") else { continue }
                try body(HistoryChangeView(payload: bytes, names: names, propertiesOffset: offset, propertyCount: header.propertyCount, storeID: storeID,
                                           token: token, timestamp: timestamp, author: author, contextName: contextName, reason: reason,
                                           index: index, changeType: header.type, entityName: header.entity, primaryKey: header.key,
                                           chainHash: chainHash, movedKey: header.movedKey, key: header.keyValues))
            }
        }
    }

    /// Hands the transaction row `statement` to `schema` when it is a schema transaction (and
    /// `keepsSchema`), or to `gaps` when it is a capture gap; returns whether it did.
    private static func handMarker(_ statement: Statement, token: PersistentHistoryToken, keepsSchema: Bool, schema: ((SchemaChangeEvent) throws -> Void)?,
                                   gaps: ((CaptureGapEvent) throws -> Void)?, on db: Connection) throws -> Bool {
        let processID = statement.int64(at: 4)
        guard processID == Int64(SchemaHistory.source.processID) || processID == Int64(CaptureGapEvent.processID) else { return false }
        let timestamp = Date(timeIntervalSince1970: statement.double(at: 1))
        let chainHash = statement.isNull(at: 9) ? nil : statement.withBytes(at: 9) { Array($0) }
        if let schema, processID == Int64(SchemaHistory.source.processID), keepsSchema, let change = try SchemaHistory.change(at: token.value, on: db) {
            try schema(SchemaChangeEvent(token: token, timestamp: timestamp, change: change, chainHash: chainHash))
            return true
        }
        guard let gaps, CaptureGapEvent.isGap(processID: processID, processName: statement.string(at: 5)) else { return false }
        let description = statement.isNull(at: 3) ? "" : statement.string(at: 3)
        try gaps(CaptureGapEvent(token: token, timestamp: timestamp, description: description, entities: try CaptureGapEvent.entities(at: token.value, on: db), chainHash: chainHash))
        return true
    }

    /// Runs the history query for `filter` in one read transaction, calling `row` per transaction row:
    /// token, timestamp, author, context name, process ID, process name, change count, payload, reason
    /// and chain hash (both NULL in a store opened read-only in a format without them; the hash
    /// NULL too when the history is not chained).
    private func stepHistory(_ filter: HistoryFilter, store: PersistentStore, _ row: (Statement, PersistentHistoryToken, Connection) throws -> Void) throws {
        let query = try HistoryQuery(filter, storeID: store.identifier, objectIndex: store.history?.hasObjectIndex ?? false)
        let storeKey = PersistentHistoryToken.key(of: store.identifier)
        let (reason, hash) = store.historyFormat ?? 0 >= 3 ? ("reason", "hash") : ("NULL", "NULL")
        try store.database.read { db in
            try Self.checkNotExpired(filter, db: db, store: store)
            let statement = try db.makeStatement("""
                SELECT token, timestamp, s.author, s.contextName, s.processID, s.processName, changeCount, payload, \(reason), \(hash)
                FROM \(HistorySchema.transactions) JOIN \(HistorySchema.sources) s ON s.id = sourceID\(query.whereSQL) ORDER BY token
                """)
            try statement.bind(query.arguments)
            while try statement.step() {
                try row(statement, PersistentHistoryToken(value: statement.int64(at: 0), storeKey: storeKey), db)
            }
        }
    }

    /// The most changes a history batch holds beyond its first transaction.
    public static let maximumChangesPerHistoryBatch = 10_000

    /// The open store, or an error saying how to turn history on.
    func requireHistoryStore() throws -> PersistentStore {
        let store = try requireStore()
        guard store.isHistoryTracked else {
            throw TributaryError(.historyNotTracked, "the store does not track history", location: store.url.path,
                                 hint: "open it with persistentHistoryTracking = true (tributary init STORE --model FILE --history) before writing")
        }
        try store.foldForeignWrites()
        return store
    }

    static func prunedThrough(_ db: Connection) throws -> Int64 {
        try db.scalar("SELECT value FROM _tributary_metadata WHERE key = 'historyPrunedThrough'")?.stringValue.flatMap { Int64($0) } ?? 0
    }

    /// A request after a token older than the oldest kept history would silently skip
    /// what pruning removed: refuse it, naming the way out.
    static func checkNotExpired(_ filter: HistoryFilter, db: Connection, store: PersistentStore) throws {
        guard let after = filter.after else { return }
        let pruned = try prunedThrough(db)
        if after.value < pruned {
            let oldest = PersistentHistoryToken(value: pruned, storeID: store.identifier)
            throw TributaryError(.historyExpired, "history after \(after) was pruned; the oldest token still kept is \(oldest)", location: store.url.path,
                                 hint: "resynchronise from a snapshot (tributary export --snapshot) and continue after \(oldest), or restart from the current token")
        }
    }
}
