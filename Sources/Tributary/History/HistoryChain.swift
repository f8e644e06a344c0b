import Foundation

/// The hash that chains every history transaction to the one before it, so that an
/// edit of the history tables shows.
///
/// Each transaction's hash is SHA-256 over the previous transaction's hash, its token,
/// its timestamp, its source (author, context name, process ID and name), its reason, its
/// change count, its entity list and its stored payload, each length-prefixed
/// (``entryBytes(previous:_:)``). It is written with the transaction, in the same SQL
/// transaction. The first transaction chains from the anchor: 32 zero bytes in a new
/// store, the hash of the last pruned transaction after pruning.
///
/// A store's history is chained when its newest transaction has a hash, or, with none
/// kept, when the metadata holds an anchor; stores made with
/// ``PersistentStoreDescription/historyHashChain`` off hold neither.
enum HistoryChain {
    /// The `_tributary_metadata` key of the hash the oldest kept transaction chains from.
    static let anchorKey = "historyChainAnchor"
    /// The anchor of a store whose history was never pruned.
    static let genesis = [UInt8](repeating: 0, count: 32)

    /// The fields a transaction's hash covers, as stored.
    struct Entry {
        var token: Int64
        var timestamp: Double
        var source: HistorySource
        var reason: String?
        var changeCount: Int64
        var entities: String
        var payload: UnsafeRawBufferPointer
    }

    /// The hash of `entry` chained after `previous`.
    static func hash(previous: [UInt8], _ entry: Entry) -> [UInt8] {
        var sha = SHA256()
        sha.update(entryBytes(previous: previous, entry))
        sha.update(UnsafeBufferPointer(start: entry.payload.baseAddress?.assumingMemoryBound(to: UInt8.self), count: entry.payload.count))
        return sha.finalizeDigest()
    }

    /// Everything the hash covers before the payload itself (whose length is the last field).
    static func entryBytes(previous: [UInt8], _ entry: Entry) -> [UInt8] {
        var out = ByteWriter()
        out.bytes.append(contentsOf: previous)
        out.fixed64(UInt64(bitPattern: entry.token))
        out.fixed64(entry.timestamp.bitPattern)
        out.optionalText(entry.source.author)
        out.optionalText(entry.source.contextName)
        out.fixed64(UInt64(bitPattern: Int64(entry.source.processID)))
        out.optionalText(entry.source.processName)
        out.optionalText(entry.reason)
        out.fixed64(UInt64(bitPattern: entry.changeCount))
        out.optionalText(entry.entities)
        out.fixed64(UInt64(entry.payload.count))
        return out.bytes
    }

    /// The newest transaction's token and hash, or, with none kept, the pruned-through
    /// token and the anchor; the hash is nil when the history is not chained.
    static func head(on db: Connection) throws -> (token: Int64, hash: [UInt8]?) {
        try point(through: .max, on: db)
    }

    /// The newest kept transaction at or before `token` and its hash or, with none kept
    /// there, the pruned-through token and the anchor; the hash is nil when not chained.
    static func point(through token: Int64, on db: Connection) throws -> (token: Int64, hash: [UInt8]?) {
        let newest = try db.cachedStatement("SELECT token, hash FROM \(HistorySchema.transactions) WHERE token <= ? ORDER BY token DESC LIMIT 1")
        defer { newest.reset() }
        try newest.bind([.integer(token)])
        if try newest.step() {
            return (newest.int64(at: 0), newest.isNull(at: 1) ? nil : newest.withBytes(at: 1) { Array($0) })
        }
        return (try PersistentStoreCoordinator.prunedThrough(db), try anchor(on: db))
    }

    /// The hash the oldest kept transaction chains from; nil when the history is not chained.
    static func anchor(on db: Connection) throws -> [UInt8]? {
        guard let text = try db.scalar("SELECT value FROM _tributary_metadata WHERE key = '\(anchorKey)'")?.stringValue else { return nil }
        return Hex.bytes(text)
    }

    /// Sets the anchor (at creation, and when pruning removes the transactions before it).
    static func setAnchor(_ hash: [UInt8], on db: Connection) throws {
        try db.execute("INSERT INTO _tributary_metadata (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                       [.string(anchorKey), .string(Hex.string(hash))])
    }

    /// Hashes every kept transaction in token order from the genesis anchor: for history
    /// written before the chain existed, once, when the store is upgraded.
    static func chainExisting(on db: Connection) throws {
        try setAnchor(genesis, on: db)
        var previous = genesis
        var hashes: [(Int64, [UInt8])] = []
        try HistoryChainWalk.rows(on: db) { row in
            previous = hash(previous: previous, row.entry)
            hashes.append((row.entry.token, previous))
        }
        let update = try db.makeStatement("UPDATE \(HistorySchema.transactions) SET hash = ? WHERE token = ?")
        for (token, hash) in hashes {
            try update.bind([.data(Data(hash)), .integer(token)])
            try update.run()
            update.reset()
        }
    }
}

extension ByteWriter {
    /// A big-endian 64-bit integer.
    mutating func fixed64(_ value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    /// A present flag, then the UTF-8 length and bytes.
    mutating func optionalText(_ text: String?) {
        guard let text else { bytes.append(0); return }
        bytes.append(1)
        fixed64(UInt64(text.utf8.count))
        bytes.append(contentsOf: text.utf8)
    }
}
