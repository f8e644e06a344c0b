/// The rows of an import waiting to be written, and the writing of them through
/// ``BatchInserter``: consecutive rows giving the same keys and no links go in the
/// columnar form (the fast one); a row with a to-many or inverse to-one relationship
/// makes the batch one of dictionaries, which sets links. Rows keep their order, so a
/// key given twice in the file ends with its last line's values.
struct NDJSONImportBatch {
    let decoder: NDJSONDecoder
    let displayName: String
    private var inserter: BatchInserter
    /// Columnar rows: the keys given (a mask of the decoder's properties), their names, the values.
    private var shape: UInt64 = 0
    private var columns: [String] = []
    private var columnIndices: [Int] = []
    private var rows: [[AttributeValue]] = []
    /// Dictionary rows (when some row of the batch sets links).
    private var objects: [[String: AttributeValue]] = []
    /// The line of each pending row.
    private var lines: [Int] = []
    /// Rows written so far.
    private(set) var result = BatchResult()

    init(store: PersistentStore, decoder: NDJSONDecoder, displayName: String, batchSize: Int) throws {
        self.decoder = decoder
        self.displayName = displayName
        self.inserter = try BatchInserter(store: store, entityName: decoder.entity.name)
        inserter.setsLinksOnUpdate = true
        rows.reserveCapacity(batchSize)
        lines.reserveCapacity(batchSize)
    }


    /// Adds a decoded row of `line`, writing the pending rows first when it cannot join them.
    mutating func add(_ row: NDJSONRow, line: Int, on db: Connection) throws {
        if row.hasLinks || !objects.isEmpty {
            if !rows.isEmpty { try flush(on: db) }
            var object: [String: AttributeValue] = [:]
            for (i, property) in decoder.properties.enumerated() where row.has(i) {
                if case .derived = property.slot { continue }
                object[property.name] = row.values[i]
            }
            objects.append(object)
        } else {
            let given = row.mask & decoder.storedMask
            if !rows.isEmpty, given != shape { try flush(on: db) }
            if rows.isEmpty, given != shape || columns.isEmpty {
                shape = given
                columnIndices = decoder.properties.indices.filter { given & (1 << UInt64($0)) != 0 }
                columns = columnIndices.map { decoder.properties[$0].name }
            }
            var values: [AttributeValue] = []
            values.reserveCapacity(columnIndices.count)
            for i in columnIndices { values.append(row.values[i]) }
            rows.append(values)
        }
        lines.append(line)
    }

    /// Writes the pending rows, in the caller's transaction.
    mutating func flush(on db: Connection) throws {
        guard !lines.isEmpty else { return }
        defer {
            rows.removeAll(keepingCapacity: true)
            objects.removeAll(keepingCapacity: true)
            lines.removeAll(keepingCapacity: true)
        }
        let written: BatchResult
        do {
            if objects.isEmpty {
                written = try inserter.run(columns: columns, rows: rows, resultType: .count, on: db)
            } else {
                written = try inserter.run(objects, resultType: .count, on: db)
            }
        } catch let error as TributaryError {
            throw relocated(error)
        }
        result.add(written)
    }

    /// The inserter's error placed at its line of the file: "Post object N" is the batch's
    /// Nth row; an error about the batch's columns (no row) is its first line's.
    private func relocated(_ error: TributaryError) -> TributaryError {
        let name = decoder.entity.name
        guard let location = error.location else { return error }
        var line: Int?
        if location == name {
            line = lines.first
        } else if location.hasPrefix(name + " object "), let n = Int(location.dropFirst(name.count + 8)), n >= 1, n <= lines.count {
            line = lines[n - 1]
        }
        guard let line else { return error }
        return TributaryError(error.code, error.message, location: "\(displayName):\(line)", hint: error.hint)
    }
}
