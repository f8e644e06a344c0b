/// Takes part in every write transaction of a store's writer, as GRDB's
/// `TransactionObserver` does: the store registers its participants
/// (``StoreDatabase/addParticipant(_:)``) and the writer calls them at each step, so
/// the SQLite layer need not know what they do (capture of other programs' writes).
///
/// Calls come on the writer's thread, under its lock, one transaction at a time.
protocol WriteParticipant: AnyObject, Sendable {
    /// Right after `BEGIN IMMEDIATE`, before the transaction's own statements; a
    /// thrown error rolls the transaction back.
    func writeDidBegin(on db: Connection) throws
    /// Just before `COMMIT`, after the transaction's history is written.
    func writeWillCommit(on db: Connection) throws
    /// Once the transaction has ended: committed, or rolled back.
    func writeDidEnd(on db: Connection, committed: Bool)
}
