/// How far an import has got, reported after each batch.
///
/// ```swift
/// try importer.importFile(at: url) { progress in
///     print("\(progress.rows) rows, \(progress.bytesRead) of \(progress.totalBytes ?? 0) bytes")
/// }
/// ```
public struct ImportProgress: Sendable, Equatable {
    /// Rows written so far (in the import's transaction: visible to others once it commits).
    public var rows: Int
    /// Bytes of the input read so far.
    public var bytesRead: Int
    /// The input's size, when known (a regular file); nil for a pipe.
    public var totalBytes: Int?
}
