/// Changes the recorder did not see through its pre-update hook: those of statements run
/// with the stored triggers on (a `WITHOUT ROWID` table's writes, numbered by its
/// ``KeyMap``), which the capture triggers logged and the transaction folded
/// (``ForeignCapture/foldOwnWrites(on:)``). They join the transaction's history as its own,
/// merged as the hook's changes are with any earlier change to the same object.
extension HistoryRecorder {
    /// Adds `changes` to the transaction in hand.
    func append(_ changes: [RecordedChange]) throws {
        guard isEnabled else { return }
        for change in changes {
            guard let index = captures.firstIndex(where: { $0.entity == change.entity }) else {
                throw TributaryError(.incompatibleModel, "a change of \(change.entity) was logged, which this store's model does not have",
                                     hint: "open the store again")
            }
            record(change, entityIndex: index)
        }
    }
}
