import Synchronization
import Tributary
import TributaryStreams

/// The `--json` line of each transaction `history` and `tail` print, with blobs other
/// programs stored in attributes that are not binary marked apart from text (``BlobMarking``)
/// by the model the transaction was made under (``ModelSpans``).
///
/// ```swift
/// let lines = TransactionJSON(coordinator: coordinator)
/// print(lines.line(transaction))
/// ```
final class TransactionJSON: Sendable {
    private let state: Mutex<(spans: ModelSpans, marking: BlobMarking)>

    init(coordinator: PersistentStoreCoordinator) {
        state = Mutex((ModelSpans(coordinator: coordinator), BlobMarking()))
    }

    /// `transaction`'s NDJSON line (``PersistentHistoryTransaction/jsonLine``); throws what
    /// reading the model at its token throws.
    func line(_ transaction: PersistentHistoryTransaction) throws -> String {
        let marking = try state.withLock { state in
            if let model = try state.spans.model(at: transaction.token.value) { state.marking = BlobMarking(model) }
            return state.marking
        }
        return transaction.jsonLine(blobsMarked: marking.names(of:))
    }
}
