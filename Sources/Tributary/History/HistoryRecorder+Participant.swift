/// The recorder's part in each write transaction of the store's writer: just before the
/// commit it writes the transaction's history (the changes its pre-update hook collected)
/// under the metadata the write was given, and forgets them on a rollback.
extension HistoryRecorder: WriteParticipant {
    /// What the recorder knows of the write transaction in hand.
    struct TransactionInHand {
        var metadata = TransactionMetadata()
        /// Where the token is marked before the commit (a context's save), and the token marked.
        var marking: LocalCommits?
        var marked: Int64?
    }

    /// Gives the transaction in hand its metadata and, for a context's save, the local
    /// commits its token is marked in before the commit (so no reader sees it unmarked).
    /// Called inside the transaction, under the writer lock; a transaction not prepared is
    /// recorded with empty metadata.
    func prepare(_ metadata: TransactionMetadata, marking: LocalCommits?) {
        inHand = TransactionInHand(metadata: metadata, marking: marking)
    }

    func writeWillCommit(on db: Connection) throws -> Int64? {
        guard isEnabled, let token = try commit(on: db, metadata: inHand.metadata) else { return nil }
        if let marking = inHand.marking {
            marking.mark(token)
            inHand.marked = token
        }
        return token
    }

    func writeDidCommit(on db: Connection, written: Int64?) {
        inHand = TransactionInHand()
    }

    func writeDidRollback(on db: Connection) {
        discard()
        if let marked = inHand.marked { inHand.marking?.unmark(marked) }
        inHand = TransactionInHand()
    }
}
