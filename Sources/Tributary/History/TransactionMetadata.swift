/// Who wrote a transaction: recorded with its history.
///
/// ```swift
/// var request = BatchInsertRequest(entityName: "Post", objects: rows)
/// request.transaction = TransactionMetadata(author: "importer", contextName: "nightly", reason: "ticket 4211: nightly feed")
/// ```
public struct TransactionMetadata: Sendable, Equatable {
    /// The author (Core Data's `transactionAuthor`), used to filter history by writer.
    public var author: String?
    /// The writing context's name.
    public var contextName: String?
    /// Why the change was made, in the writer's words (shown by `history`, `tail`, the
    /// timelines and every stream format). Core Data has no such field; auditors ask why.
    public var reason: String?

    /// Metadata with an author, a context name and a reason, all optional.
    public init(author: String? = nil, contextName: String? = nil, reason: String? = nil) {
        self.author = author
        self.contextName = contextName
        self.reason = reason
    }
}
