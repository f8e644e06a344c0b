/// Changes the recorder did not see through its pre-update hook: those of statements run
/// with the stored triggers on (a `WITHOUT ROWID` table's writes, numbered by its
/// ``KeyMap``), which the capture triggers logged and the transaction folded
/// (``ForeignCapture/foldOwnWrites(on:)``). They join the transaction's history as its own.
extension HistoryRecorder {
    /// Adds `changes` to the transaction in hand, after those recorded so far.
    func append(_ changes: [RecordedChange]) {
        guard isEnabled else { return }
        for change in changes {
            var encoded = ByteWriter()
            HistoryPayload.encodeChange(change, into: &encoded, names: &names)
            let start = body.bytes.count
            body.bytes.append(contentsOf: encoded.bytes)
            segments.append(Segment(start: start, end: body.bytes.count, live: true, entity: names.intern(change.entity), key: change.primaryKey))
        }
    }
}
