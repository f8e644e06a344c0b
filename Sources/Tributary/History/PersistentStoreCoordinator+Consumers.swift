import Foundation

extension PersistentStoreCoordinator {
    /// Registers a consumer (doing nothing if it exists) and returns it.
    ///
    /// ```swift
    /// let consumer = try coordinator.registerHistoryConsumer("audit", startingAt: .oldest)
    /// ```
    @discardableResult
    public func registerHistoryConsumer(_ name: String, startingAt start: ConsumerStart = .current) throws -> HistoryConsumer {
        let store = try requireHistoryStore()
        try Self.checkConsumerName(name)
        try store.database.write { db in
            let value: Int64
            switch start {
            case .current: value = try db.scalar(HistorySchema.newestTokenSQL)?.integerValue ?? 0
            case .oldest: value = try Self.prunedThrough(db)
            case .token(let token):
                try token.check(belongsTo: store.identifier)
                try Self.checkNotAhead(token, of: db, consumer: name, store: store)
                value = token.value
            }
            let now = Date().timeIntervalSince1970
            try db.execute("INSERT INTO \(HistorySchema.consumers) (name, token, committedAt, createdAt) VALUES (?, ?, ?, ?) ON CONFLICT(name) DO NOTHING",
                           [.string(name), .integer(value), .double(now), .double(now)])
        }
        return try historyConsumer(named: name)
    }

    /// Moves a consumer to `token`: everything through it is done.
    ///
    /// ```swift
    /// try coordinator.commitHistoryConsumer("audit", through: transaction.token)
    /// ```
    public func commitHistoryConsumer(_ name: String, through token: PersistentHistoryToken) throws {
        let store = try requireHistoryStore()
        try token.check(belongsTo: store.identifier)
        try store.database.write { db in
            try Self.checkNotAhead(token, of: db, consumer: name, store: store)
            try db.execute("UPDATE \(HistorySchema.consumers) SET token = ?, committedAt = ? WHERE name = ?",
                           [.integer(token.value), .double(Date().timeIntervalSince1970), .string(name)])
            if db.changes == 0 { throw Self.unknownConsumer(name, store: store) }
        }
    }

    /// Removes a consumer; its history may then be pruned.
    public func removeHistoryConsumer(_ name: String) throws {
        let store = try requireHistoryStore()
        try store.database.write { db in
            try db.execute("DELETE FROM \(HistorySchema.consumers) WHERE name = ?", [.string(name)])
            if db.changes == 0 { throw Self.unknownConsumer(name, store: store) }
        }
    }

    /// One consumer, or `unknownConsumer`.
    public func historyConsumer(named name: String, warningLag: Int = 10_000, idleTimeout: TimeInterval? = nil) throws -> HistoryConsumer {
        let store = try requireHistoryStore()
        guard let consumer = try historyConsumers(warningLag: warningLag, idleTimeout: idleTimeout).first(where: { $0.name == name }) else {
            throw Self.unknownConsumer(name, store: store)
        }
        return consumer
    }

    /// Every consumer with its position, lag and state. A consumer is `lagging` past
    /// `warningLag` transactions, and `expired` when history after its token was pruned
    /// or it has not committed within `idleTimeout`.
    public func historyConsumers(warningLag: Int = 10_000, idleTimeout: TimeInterval? = nil) throws -> [HistoryConsumer] {
        let store = try requireHistoryStore()
        let storeKey = PersistentHistoryToken.key(of: store.identifier)
        return try store.database.read { db in
            let pruned = try Self.prunedThrough(db)
            let now = Date().timeIntervalSince1970
            var consumers: [HistoryConsumer] = []
            let statement = try db.makeStatement("SELECT name, token, committedAt, createdAt FROM \(HistorySchema.consumers) ORDER BY name")
            while try statement.step() {
                let token = statement.int64(at: 1)
                let committedAt = statement.double(at: 2)
                let lag = Int(try db.scalar("SELECT count(*) FROM \(HistorySchema.transactions) WHERE token > ?", [.integer(token)])?.integerValue ?? 0)
                // How long the oldest unread transaction has waited: one stuck transaction raises it.
                var lagSeconds = 0.0
                if lag > 0, let next = try db.scalar("SELECT timestamp FROM \(HistorySchema.transactions) WHERE token > ? ORDER BY token LIMIT 1", [.integer(token)])?.doubleValue {
                    lagSeconds = max(0, now - next)
                }
                let idle = idleTimeout.map { now - committedAt > $0 } ?? false
                let state: HistoryConsumer.State = token < pruned || idle ? .expired : lag > warningLag ? .lagging : .current
                consumers.append(HistoryConsumer(name: statement.string(at: 0), token: PersistentHistoryToken(value: token, storeKey: storeKey),
                                                 committedAt: Date(timeIntervalSince1970: committedAt), createdAt: Date(timeIntervalSince1970: statement.double(at: 3)),
                                                 lagTransactions: lag, lagSeconds: lagSeconds, state: state))
            }
            return consumers
        }
    }

    /// The longest consumer name accepted, in UTF-8 bytes.
    public static let maximumConsumerNameLength = 200

    /// Refuses a consumer name that is empty or only spaces, longer than
    /// ``maximumConsumerNameLength`` bytes, or that holds control characters (newlines,
    /// escapes), which would garble every listing of consumers.
    static func checkConsumerName(_ name: String) throws {
        let shown = name.unicodeScalars.prefix(40).map { $0.properties.generalCategory == .control ? $0.escaped(asASCII: true) : String($0) }.joined()
        func refuse(_ why: String) -> TributaryError {
            TributaryError(.invalidInput, "'\(shown)\(name.unicodeScalars.count > 40 ? "…" : "")' is not a valid consumer name: \(why)", hint: "use a short name such as search-index")
        }
        if name.allSatisfy(\.isWhitespace) { throw refuse(name.isEmpty ? "it is empty" : "it is only spaces") }
        if name.utf8.count > maximumConsumerNameLength { throw refuse("it is \(name.utf8.count) bytes long, more than \(maximumConsumerNameLength)") }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0.properties.isNoncharacterCodePoint || $0 == "\u{2028}" || $0 == "\u{2029}" }) {
            throw refuse("it holds control characters")
        }
    }

    /// Refuses a position after the newest transaction: a consumer there would skip every
    /// transaction up to it, and `.consumed` pruning would delete them unread.
    static func checkNotAhead(_ token: PersistentHistoryToken, of db: Connection, consumer: String, store: PersistentStore) throws {
        let newest = try db.scalar(HistorySchema.newestTokenSQL)?.integerValue ?? 0
        guard token.value <= newest else {
            throw TributaryError(.invalidInput, "token \(token.value) is after the store's newest transaction (\(newest)); consumer '\(consumer)' would skip every transaction up to it",
                                 location: store.url.path, hint: "give a token the store has reached (tributary token STORE prints the newest)")
        }
    }

    static func unknownConsumer(_ name: String, store: PersistentStore) -> TributaryError {
        TributaryError(.unknownConsumer, "no consumer named '\(name)'", location: store.url.path, hint: "tributary consumers STORE list shows them; add one with consumers STORE add NAME")
    }
}
