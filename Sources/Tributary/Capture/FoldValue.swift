import Foundation

/// A column's value as the fold reads it from the capture log and the tables: exactly as
/// stored. Text that is not valid UTF-8 (another program may write any bytes as `TEXT`)
/// is kept as its bytes, marked, rather than decoded: decoding turns each bad sequence into
/// U+FFFD, so two different texts could read the same, and the fold, which compares a row's
/// values before and after a transaction, would take a change between them for none and
/// leave the whole transaction out of history. ``ForeignFold/recorded(_:as:)`` turns the
/// marked bytes into what history records.
enum FoldValue {
    /// The column at `index` of the row `statement` is on.
    static func read(_ statement: Statement, at index: Int) -> AttributeValue {
        switch statement.storageClass(at: index) {
        case .integer: return .integer(statement.int64(at: index))
        case .real: return .double(statement.double(at: index))
        case .blob: return .data(statement.data(at: index))
        case .null: return .null
        case .text:
            return statement.withBytes(at: index) { bytes in
                if let text = String(validating: bytes.bindMemory(to: UInt8.self), as: UTF8.self) { return .string(text) }
                return undecodable(Data(bytes))
            }
        }
    }

    /// Text that is not valid UTF-8, as the fold keeps it (a stored column never holds a list).
    static func undecodable(_ bytes: Data) -> AttributeValue { .array([.data(bytes)]) }

    /// The value of a column another program dropped before the fold read the row: not
    /// known (not NULL), so a change records the column as changed without its value.
    static let gone: AttributeValue = .array([])

    /// The bytes of text that is not valid UTF-8, if `value` is such text.
    static func undecodableBytes(_ value: AttributeValue) -> Data? {
        guard case .array(let items) = value, items.count == 1, case .data(let bytes) = items[0] else { return nil }
        return bytes
    }

    /// `value` with text that is not valid UTF-8 decoded as text is everywhere else (each bad
    /// sequence as U+FFFD).
    static func decoded(_ value: AttributeValue) -> AttributeValue {
        undecodableBytes(value).map { .string(String(decoding: $0, as: UTF8.self)) } ?? value
    }
}
