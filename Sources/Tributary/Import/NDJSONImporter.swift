import Foundation

/// Imports NDJSON into one entity, streaming: the input is read in chunks, each line
/// is parsed where it lies and its values written through batch inserts, all in ONE
/// write transaction. A bad line anywhere rolls the whole import back, so nothing is
/// written, while memory stays bounded by a batch, whatever the input's size. History
/// is recorded in that transaction, one history transaction per batch
/// (`PersistentStore.writeInParts`).
///
/// A line whose unique key matches an existing row updates it, relationships given
/// included (to-many ones are set to the objects listed). Relationships must name
/// objects of this store that exist.
///
/// ```swift
/// let importer = NDJSONImporter(coordinator: coordinator, entityName: "Post", batchSize: 1000)
/// let result = try importer.importFile(at: URL(fileURLWithPath: "posts.ndjson"))
/// ```
public struct NDJSONImporter: Sendable {
    /// The coordinator written through.
    public let coordinator: PersistentStoreCoordinator
    /// The entity imported into.
    public let entityName: String
    /// Rows per batch insert (and per history transaction).
    public let batchSize: Int
    /// The author and context name recorded with the import's history.
    public let transaction: TransactionMetadata
    /// Check and count only: the whole import runs in its transaction, which is then rolled
    /// back, so the result says what would be inserted and updated and nothing is written.
    public var dryRun = false

    /// An importer into `entityName`.
    public init(coordinator: PersistentStoreCoordinator, entityName: String, batchSize: Int = 1000, transaction: TransactionMetadata = TransactionMetadata()) {
        self.coordinator = coordinator
        self.entityName = entityName
        self.batchSize = max(1, batchSize)
        self.transaction = transaction
    }

    /// Imports the file at `url` (`displayName` names it in errors); `progress` is
    /// called after each batch.
    @discardableResult
    public func importFile(at url: URL, displayName: String? = nil, progress: (ImportProgress) -> Void = { _ in }) throws -> BatchResult {
        let name = displayName ?? url.path
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw TributaryError(.fileNotFound, "cannot read the input file (\(String(cString: strerror(errno))))", location: name, hint: "check the path, or pass - to read standard input")
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, (status.st_mode & S_IFMT) != S_IFDIR else {
            throw TributaryError(.invalidInput, "the input is a directory", location: name, hint: "give an NDJSON file, or - to read standard input")
        }
        let size = (status.st_mode & S_IFMT) == S_IFREG ? Int(status.st_size) : nil
        var reader = NDJSONLineReader(fileDescriptor: fd)
        return try run(&reader, displayName: name, totalBytes: size, progress: progress)
    }

    /// Imports what `handle` gives until its end (standard input: `FileHandle.standardInput`).
    @discardableResult
    public func importFileHandle(_ handle: FileHandle, displayName: String, progress: (ImportProgress) -> Void = { _ in }) throws -> BatchResult {
        var reader = NDJSONLineReader(fileDescriptor: handle.fileDescriptor)
        return try run(&reader, displayName: displayName, totalBytes: nil, progress: progress)
    }

    /// Imports NDJSON bytes.
    @discardableResult
    public func importData(_ data: Data, displayName: String, progress: (ImportProgress) -> Void = { _ in }) throws -> BatchResult {
        var reader = NDJSONLineReader(data: data)
        return try run(&reader, displayName: displayName, totalBytes: data.count, progress: progress)
    }

    /// Reads, decodes and writes every line in one transaction.
    private func run(_ reader: inout NDJSONLineReader, displayName: String, totalBytes: Int?, progress: (ImportProgress) -> Void) throws -> BatchResult {
        let store = try coordinator.requireStore()
        let decoder = try NDJSONDecoder(entity: entityName, store: store)
        var batch = try NDJSONImportBatch(store: store, decoder: decoder, displayName: displayName, batchSize: batchSize)
        var parser = NDJSONObjectParser()
        var row = NDJSONRow(count: decoder.properties.count)
        do {
            return try store.writeInParts(transaction) { db, endHistoryPart in
                // A link must name an existing object; rows of this entity not written yet are written first.
                let linkExists: (ObjectID) throws -> Bool = { id in
                    if id.entityName == entityName { try batch.flush(on: db) }
                    return try db.scalar("SELECT 1 FROM \(quote(id.entityName)) WHERE \(try store.schema.table(id.entityName).key) = ?", [.integer(id.primaryKey)]) != nil
                }
                // Rows since the last history part: batches of changing keys are written early, but a
                // part still ends every `batchSize` rows, so history in memory stays bounded.
                var rowsInPart = 0
                while let line = try reader.nextLine() {
                    try decoder.decode(line.bytes, into: &row, parser: &parser, place: NDJSONPlace(file: displayName, line: line.number), linkExists: linkExists)
                    try batch.add(row, line: line.number, on: db)
                    rowsInPart += 1
                    if rowsInPart >= batchSize {
                        try batch.flush(on: db)
                        try endHistoryPart()
                        rowsInPart = 0
                        progress(ImportProgress(rows: batch.result.count, bytesRead: reader.bytesRead, totalBytes: totalBytes))
                    }
                }
                // The last part's history is recorded by the commit.
                try batch.flush(on: db)
                progress(ImportProgress(rows: batch.result.count, bytesRead: reader.bytesRead, totalBytes: totalBytes))
                if dryRun { throw DryRunResult(result: batch.result) }
                return batch.result
            }
        } catch let dry as DryRunResult {
            return dry.result
        }
    }

    /// Thrown at the end of a dry run to roll its transaction back, carrying what it counted.
    private struct DryRunResult: Error {
        let result: BatchResult
    }
}
