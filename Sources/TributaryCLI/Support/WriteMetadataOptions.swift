import ArgumentParser
import Tributary

/// The history metadata options of the commands that write: `--author` and `--reason`.
struct WriteMetadataOptions: ParsableArguments {
    @Option(name: .long, help: "The author recorded in history for these writes.")
    var author: String?

    @Option(name: .long, help: "Why the change is made, recorded in history (shown by history, tail and every stream format).")
    var reason: String?

    /// The metadata for a write by the command named `context` (an empty reason is none).
    func metadata(context: String) -> TransactionMetadata {
        TransactionMetadata(author: author, contextName: context, reason: reason.flatMap { $0.isEmpty ? nil : $0 })
    }
}
