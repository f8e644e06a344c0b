/// Who wrote a transaction: recorded with its history.
///
/// ```swift
/// var request = BatchInsertRequest(entityName: "Post", objects: rows)
/// request.transaction = TransactionMetadata(author: "importer", contextName: "nightly")
/// ```
public struct TransactionMetadata: Sendable, Equatable {
    /// The author (Core Data's `transactionAuthor`), used to filter history by writer.
    public var author: String?
    /// The writing context's name.
    public var contextName: String?

    /// Metadata with an author and a context name, both optional.
    public init(author: String? = nil, contextName: String? = nil) {
        self.author = author
        self.contextName = contextName
    }
}
