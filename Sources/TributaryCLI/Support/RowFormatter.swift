import Tributary

/// Prints fetched rows as NDJSON or as a readable table.
enum RowFormatter {
    /// One JSON object per row, keys named after the model's properties.
    static func ndjson(_ row: FetchedRow) -> String {
        var json = JSONWriter()
        json.object { object in
            for (key, value) in zip(row.keys, row.values) { object.field(key, value) }
        }
        return json.text
    }

    /// A table with a header, columns padded to their widest cell (capped).
    static func table(_ rows: [FetchedRow], keys: [String]) -> [String] {
        let header = ["id"] + keys
        let cells = rows.map { row in ["p\(row.objectID.primaryKey)"] + row.values.map { cell($0) } }
        var widths = header.map(\.count)
        for line in cells {
            for (i, cell) in line.enumerated() { widths[i] = min(40, max(widths[i], cell.count)) }
        }
        func render(_ line: [String]) -> String {
            zip(line, widths).map { cell, width in
                let text = cell.count > width ? String(cell.prefix(width - 1)) + "…" : cell
                return text.padding(toLength: width, withPad: " ", startingAt: 0)
            }.joined(separator: "  ").trimmingTrailingSpaces()
        }
        return [render(header), render(widths.map { String(repeating: "-", count: $0) })] + cells.map(render)
    }

    static func cell(_ value: AttributeValue) -> String {
        switch value {
        case .null: return ""
        case .objectID(let id): return "\(id.entityName)/p\(id.primaryKey)"
        default: return value.description.replacingOccurrences(of: "\n", with: " ")
        }
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var s = self
        while s.last == " " { s.removeLast() }
        return s
    }
}
