/// Takes part in every write transaction of a store's writer, as GRDB's
/// `TransactionObserver` does: the store registers its participants
/// (``StoreDatabase/addParticipant(_:setUp:)``) and the writer calls them at each step,
/// so the SQLite layer need not know what they do. A store registers the remote-change
/// poster (tells listeners after each commit), the capture of other programs' writes
/// (folds them into history when a transaction begins) and the history recorder (writes
/// the transaction's own history before it commits), called in that order.
///
/// Calls come on the writer's thread, under its lock, one transaction at a time.
protocol WriteParticipant: AnyObject, Sendable {
    /// Right after `BEGIN IMMEDIATE`, before the transaction's own statements; a
    /// thrown error rolls the transaction back.
    func writeDidBegin(on db: Connection) throws
    /// Just before `COMMIT`: writes what the participant keeps of the transaction and
    /// returns the sequence number it wrote it under (the history token), if any. A
    /// thrown error rolls the transaction back.
    func writeWillCommit(on db: Connection) throws -> Int64?
    /// Once the transaction committed; `written` is the sequence number a participant
    /// returned from ``writeWillCommit(on:)`` (nil when none wrote one).
    func writeDidCommit(on db: Connection, written: Int64?)
    /// Once the transaction rolled back (its statements, a participant or the commit failed).
    func writeDidRollback(on db: Connection)
}

extension WriteParticipant {
    func writeDidBegin(on db: Connection) throws {}
    func writeWillCommit(on db: Connection) throws -> Int64? { nil }
    func writeDidCommit(on db: Connection, written: Int64?) {}
    func writeDidRollback(on db: Connection) {}
}
