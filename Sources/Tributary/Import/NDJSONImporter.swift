import Foundation

/// Imports an NDJSON file into one entity with batch inserts. The whole file is
/// read and checked first, so a bad line rejects the import before anything is
/// written; then each batch is one batch insert in its own transaction.
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
    /// Rows per batch insert.
    public let batchSize: Int
    /// The author and context name recorded with each batch's history.
    public let transaction: TransactionMetadata

    /// An importer into `entityName`.
    public init(coordinator: PersistentStoreCoordinator, entityName: String, batchSize: Int = 1000, transaction: TransactionMetadata = TransactionMetadata()) {
        self.coordinator = coordinator
        self.entityName = entityName
        self.batchSize = max(1, batchSize)
        self.transaction = transaction
    }

    /// Imports the file at `url` (`displayName` names it in errors); `progress`
    /// is called after each batch with the rows written so far.
    @discardableResult
    public func importFile(at url: URL, displayName: String? = nil, progress: (Int, Int) -> Void = { _, _ in }) throws -> BatchResult {
        let name = displayName ?? url.path
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw TributaryError(.fileNotFound, "cannot read the input file", location: name, hint: "check the path, or pass - to read standard input")
        }
        return try importData(data, displayName: name, progress: progress)
    }

    /// Imports NDJSON bytes.
    @discardableResult
    public func importData(_ data: Data, displayName: String, progress: (Int, Int) -> Void = { _, _ in }) throws -> BatchResult {
        let store = try coordinator.requireStore()
        let decoder = try NDJSONDecoder(entity: entityName, store: store)
        // Check every line before writing anything.
        var rows: [[String: AttributeValue]] = []
        var lineNumber = 0
        let text = String(decoding: data, as: UTF8.self)
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.isEmpty { continue }
            rows.append(try decoder.decode(line: trimmed, place: "\(displayName):\(lineNumber)"))
        }
        try validate(rows, store: store, displayName: displayName, text: text)
        var total = BatchResult()
        var start = 0
        while start < rows.count {
            let end = min(start + batchSize, rows.count)
            var request = BatchInsertRequest(entityName: entityName, objects: Array(rows[start..<end]))
            request.transaction = transaction
            let result = try coordinator.execute(request)
            total.count += result.count
            total.inserted += result.inserted
            total.updated += result.updated
            start = end
            progress(total.count, rows.count)
        }
        return total
    }

    /// Runs every batch in a transaction that is rolled back, so that an error any
    /// batch would raise (a missing value, a unique clash) surfaces before a write.
    private func validate(_ rows: [[String: AttributeValue]], store: PersistentStore, displayName: String, text: String) throws {
        let lineOfRow = Self.lineNumbers(text)
        do {
            try store.database.withWriter { db in
                try db.execute("BEGIN IMMEDIATE")
                defer {
                    try? db.execute("ROLLBACK")
                    store.database.recorder.discard()
                }
                var inserter = try BatchInserter(store: store, entityName: entityName)
                var start = 0
                while start < rows.count {
                    let end = min(start + batchSize, rows.count)
                    do {
                        _ = try inserter.run(Array(rows[start..<end]), resultType: .statusOnly, on: db)
                    } catch let error as TributaryError {
                        // Re-locate "Post object N" (1-based within the batch) to the file's line.
                        if let location = error.location, let range = location.range(of: "object "), let n = Int(location[range.upperBound...]) {
                            let row = start + n - 1
                            let line = row < lineOfRow.count ? lineOfRow[row] : row + 1
                            throw TributaryError(error.code, error.message, location: "\(displayName):\(line)", hint: error.hint)
                        }
                        throw error
                    }
                    start = end
                }
            }
        }
    }

    /// The 1-based line number of each non-empty line.
    private static func lineNumbers(_ text: String) -> [Int] {
        var lines: [Int] = []
        var number = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            if !line.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { lines.append(number) }
        }
        return lines
    }
}
