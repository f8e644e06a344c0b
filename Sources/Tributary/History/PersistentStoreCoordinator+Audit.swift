import Foundation

extension PersistentStoreCoordinator {
    /// Walks the history's hash chain (``PersistentStoreDescription/historyHashChain``)
    /// from its anchor to its newest transaction and reports the first transaction whose
    /// content, order or presence differs from what was written: an edited payload,
    /// author, context, reason, timestamp or token, a deleted, inserted or reordered
    /// transaction. Someone who can write the file could also recompute every hash after
    /// an edit; compare ``HistoryChainReport/headHash`` with a copy kept elsewhere (an
    /// exported stream, a signed checkpoint) to rule that out.
    ///
    /// ```swift
    /// let report = try coordinator.verifyHistoryChain()
    /// print(report.problem.map(String.init(describing:)) ?? "\(report.transactions) transactions, chain intact")
    /// ```
    public func verifyHistoryChain() throws -> HistoryChainReport {
        let store = try requireHistoryStore()
        guard store.historyFormat ?? 0 >= 3 else {
            throw TributaryError(.invalidInput, "the store's history was written before transactions were chained", location: store.url.path,
                                 hint: "open it read-write once (any write command) to upgrade it; the chain then starts from the history kept")
        }
        return try store.database.read { db in try ChainVerifier(db: db).run() }
    }

    /// The chain hash of the newest kept transaction at or before `token` (the anchor when
    /// none is kept there), with its token: what an export records so that the store can
    /// later be checked against it. Nil when the history is not chained.
    package func historyChainPoint(through token: Int64) throws -> (token: Int64, hash: [UInt8])? {
        let store = try requireHistoryStore()
        let point = try store.database.read { db in try HistoryChain.point(through: token, on: db) }
        return point.hash.map { (point.token, $0) }
    }

    /// The chain hash the store holds for transaction `token`: its stored hash, or the
    /// anchor when `token` is the last one pruned; nil when it has neither (pruned
    /// earlier, or not written).
    package func historyChainHash(at token: Int64) throws -> [UInt8]? {
        let store = try requireHistoryStore()
        return try store.database.read { db in
            let statement = try db.makeStatement("SELECT hash FROM \(HistorySchema.transactions) WHERE token = ?")
            try statement.bind([.integer(token)])
            if try statement.step() { return statement.isNull(at: 0) ? nil : statement.withBytes(at: 0) { Array($0) } }
            return try Self.prunedThrough(db) == token ? try HistoryChain.anchor(on: db) : nil
        }
    }

    /// Checks that the store holds chain hash `hash` (hex) at `token`, as `source` (a stream,
    /// a checkpoint) recorded it: `historyTampered` when it holds another or lacks the token,
    /// `invalidInput` when the token was pruned since.
    package func requireHistoryChain(hash: String, at token: Int64, recordedBy source: String) throws {
        let store = try requireHistoryStore()
        guard let held = try historyChainHash(at: token) else {
            let oldest = try oldestKeptHistoryToken().value
            if token < oldest {
                throw TributaryError(.invalidInput, "\(source) vouches for token \(token), which this store has pruned (it keeps history after \(oldest))", location: store.url.path,
                                     hint: "check against a newer one; exporting or checkpointing more often than pruning keeps a point to compare")
            }
            throw TributaryError(.historyTampered, "the store's history was edited: token \(token), which \(source) holds, is missing from it", location: store.url.path,
                                 hint: "its newest transactions were dropped; restore the store from a copy")
        }
        guard Hex.string(held) == hash else {
            throw TributaryError(.historyTampered, "the store's history was edited: through token \(token) it differs from \(source)", location: store.url.path,
                                 hint: "it was rewritten since; rebuild it from a stream (tributary replay) or restore it from a copy")
        }
    }

    /// A checkpoint of the history's newest transaction, signed with the 32-byte Ed25519
    /// private key `signingKey`, after checking the chain through it.
    public func makeHistoryCheckpoint(signingKey: Data) throws -> HistoryCheckpoint {
        let store = try requireHistoryStore()
        let report = try verifyHistoryChain()
        try report.requireIntact(location: store.url.path)
        return try HistoryCheckpoint.sign(storeID: store.identifier, token: report.headToken, hash: report.headHash, signingKey: signingKey)
    }

    /// Checks a checkpoint: the chain (``verifyHistoryChain()``), the checkpoint's signature
    /// (by `trustedKey`, a base64 public key, when given), its store, and that the store
    /// still holds its hash at its token. Only together do they prove that the history
    /// through the checkpoint's token is as it was: the hash there vouches for every
    /// transaction before it only when the chain up to it holds.
    public func verify(_ checkpoint: HistoryCheckpoint, trustedKey: String? = nil) throws {
        try verify(checkpoint, trustedKey: trustedKey, chain: try verifyHistoryChain())
    }

    /// ``verify(_:trustedKey:)`` with the chain already walked (`chain`).
    package func verify(_ checkpoint: HistoryCheckpoint, trustedKey: String?, chain: HistoryChainReport) throws {
        let store = try requireHistoryStore()
        try chain.requireIntact(location: store.url.path)
        guard checkpoint.hasValidSignature(trusting: trustedKey) else {
            throw TributaryError(.historyTampered, "the checkpoint's signature does not hold" + (trustedKey == nil ? "" : " for the trusted key"), location: store.url.path,
                                 hint: "the checkpoint file was edited, or signed by another key")
        }
        guard checkpoint.storeID == store.identifier else {
            throw TributaryError(.invalidInput, "the checkpoint is of store \(checkpoint.storeID.uuidString.lowercased()), not this one", location: store.url.path,
                                 hint: "give a checkpoint made from this store")
        }
        try requireHistoryChain(hash: checkpoint.hash, at: checkpoint.token, recordedBy: "the checkpoint of \(checkpoint.createdAt)")
    }
}

/// One walk of the chain, stopping at the first problem.
private struct ChainVerifier {
    let db: Connection
    private struct Stop: Error {}

    func run() throws -> HistoryChainReport {
        var report = HistoryChainReport()
        let pruned = try PersistentStoreCoordinator.prunedThrough(db)
        report.headToken = pruned
        guard let anchor = try HistoryChain.anchor(on: db) else {
            report.isChained = false
            if let token = try db.scalar("SELECT min(token) FROM \(HistorySchema.transactions) WHERE hash IS NOT NULL")?.integerValue {
                report.problem = HistoryChainProblem(token: token, kind: .anchor, detail: "the chain's anchor (\(HistoryChain.anchorKey) in _tributary_metadata) is gone")
            }
            return report
        }
        var previous = anchor
        var expected = pruned + 1
        do {
            try HistoryChainWalk.rows(on: db) { row in
                let token = row.entry.token
                if report.transactions == 0 { report.oldestToken = token }
                if let problem = check(row, previous: previous, expected: expected, pruned: pruned) {
                    report.problem = problem
                    throw Stop()
                }
                previous = row.storedHash.map { Array($0) } ?? previous
                expected = token + 1
                report.transactions += 1
                report.changes += Int(row.entry.changeCount)
                report.headToken = token
            }
        } catch is Stop {}
        report.headHash = Hex.string(previous)
        return report
    }

    private func check(_ row: HistoryChainWalk.Row, previous: [UInt8], expected: Int64, pruned: Int64) -> HistoryChainProblem? {
        let token = row.entry.token
        if token <= pruned {
            return HistoryChainProblem(token: token, kind: .altered, detail: "kept although history is pruned through token \(pruned)")
        }
        if token > expected {
            let range = token - 1 == expected ? "transaction \(expected) is" : "transactions \(expected)…\(token - 1) are"
            return HistoryChainProblem(token: expected, kind: .missing, detail: "\(range) missing (deleted) before \(token)")
        }
        guard let stored = row.storedHash else {
            return HistoryChainProblem(token: token, kind: .unchained, detail: "has no hash")
        }
        guard stored.elementsEqual(HistoryChain.hash(previous: previous, row.entry)) else {
            return HistoryChainProblem(token: token, kind: .altered,
                                       detail: "its hash does not match: its payload, author, context, reason, time or token was edited, or it was inserted or moved")
        }
        return nil
    }
}
