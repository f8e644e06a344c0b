import Tributary
import TributaryStreams

/// Prints fetched rows as NDJSON or as a readable table.
enum RowFormatter {
    /// One JSON object per row: `objectID` (as history's changes name it), then keys named
    /// after the model's properties, to-many relationships as lists of object ID URIs; a blob
    /// in an attribute `marking` marks (one that is not binary) as `{"base64":"…"}`, as
    /// `history --json` writes it.
    static func ndjson(_ row: FetchedRow, toMany: [(String, [ObjectID])] = [], marking: BlobMarking) -> String {
        var json = JSONWriter()
        let marked = marking.names(of: row.objectID.entityName)
        json.object { object in
            object.field("objectID", .objectID(row.objectID))
            for (key, value) in zip(row.keys, row.values) { PersistentHistoryChange.writeField(key, value, markingBlob: marked.contains(key), to: &object) }
            for (key, members) in toMany { object.field(key, .array(members.map { .objectID($0) })) }
        }
        return json.text
    }

    /// A table with a header, columns padded to their widest cell (at most 40 columns:
    /// a longer cell runs past its column), narrowed to `width` when given (widest columns
    /// first, cut with an ellipsis); nil when the columns cannot fit in `width` even at a few
    /// columns each. Cells are measured and padded in terminal columns (`displayWidth`).
    static func table(_ rows: [FetchedRow], keys: [String], width: Int? = nil) -> [String]? {
        let header = ["id"] + keys
        let cells = rows.map { row in ["p\(row.objectID.primaryKey)"] + row.values.map { cell($0) } }
        var widths = header.map(\.displayWidth)
        for line in cells {
            for (i, cell) in line.enumerated() { widths[i] = min(40, max(widths[i], cell.displayWidth)) }
        }
        if let width {
            let gaps = 2 * (widths.count - 1)
            let narrowest = 4
            guard widths.count * narrowest + gaps <= width else { return nil }
            while widths.reduce(0, +) + gaps > width, let widest = widths.indices.max(by: { widths[$0] < widths[$1] }) {
                widths[widest] -= 1
            }
        }
        func render(_ line: [String]) -> String {
            zip(line, widths).map { cell, column in
                let text = width != nil && cell.displayWidth > column ? cell.prefix(columns: max(0, column - 1)) + "…" : cell
                return text.padded(to: column)
            }.joined(separator: "  ").trimmingTrailingSpaces()
        }
        return [render(header), render(widths.map { String(repeating: "-", count: $0) })] + cells.map(render)
    }

    /// One block per row, a line per property, as psql's expanded display (`\x`) prints them.
    static func vertical(_ rows: [FetchedRow], keys: [String], width: Int? = nil) -> [String] {
        let names = ["id"] + keys
        let nameWidth = names.map(\.displayWidth).max() ?? 2
        var lines: [String] = []
        for (number, row) in rows.enumerated() {
            let title = "-[ RECORD \(number + 1) ]"
            lines.append(title + String(repeating: "-", count: max(0, min(width ?? 40, 40) - title.count)))
            let values = ["p\(row.objectID.primaryKey)"] + row.values.map { cell($0) }
            for (name, value) in zip(names, values) {
                var text = value
                if let width, nameWidth + 3 + text.displayWidth > width { text = text.prefix(columns: max(1, width - nameWidth - 4)) + "…" }
                lines.append("\(name.padded(to: nameWidth)) | \(text)".trimmingTrailingSpaces())
            }
        }
        return lines
    }

    static func cell(_ value: AttributeValue) -> String {
        switch value {
        case .null: return ""
        case .objectID(let id): return "\(id.entityName)/p\(id.primaryKey)"
        default: return TerminalText.escaped(value.description)
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
