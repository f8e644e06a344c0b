/// Who wrote a history transaction, as its `_tributary_history_source` row holds it:
/// the author and context name of its metadata and the writing process.
struct HistorySource: Hashable, Sendable {
    var author: String?
    var contextName: String?
    var processID: Int32
    var processName: String?

    /// This process, writing with `metadata`.
    static func current(_ metadata: TransactionMetadata) -> HistorySource {
        HistorySource(author: metadata.author, contextName: metadata.contextName, processID: HistoryRecorder.processID, processName: HistoryRecorder.processName)
    }
}
