import CSQLite
import Foundation

/// A value as SQLite stores it, in place: a column of a statement's current row
/// (``Statement/column(at:)``) or a row's value before or after a change (the pre-update
/// hook's). Valid until the statement steps, or the hook returns.
package struct StoredValue {
    let value: OpaquePointer?

    /// How SQLite stores it.
    @inline(__always)
    package var storageClass: Statement.StorageClass {
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: return .integer
        case SQLITE_FLOAT: return .real
        case SQLITE_TEXT: return .text
        case SQLITE_BLOB: return .blob
        default: return .null
        }
    }

    @inline(__always) package var int64: Int64 { sqlite3_value_int64(value) }
    @inline(__always) package var double: Double { sqlite3_value_double(value) }

    /// As UTF-8 text, whatever the database's encoding.
    @inline(__always)
    package var string: String {
        guard let text = sqlite3_value_text(value) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(value))), as: UTF8.self)
    }

    /// Its bytes (text's as they are stored).
    package var data: Data {
        guard let bytes = sqlite3_value_blob(value) else { return Data() }
        return Data(bytes: bytes, count: Int(sqlite3_value_bytes(value)))
    }

    /// The value as stored (integer, double, text, blob or null).
    package var attributeValue: AttributeValue {
        switch storageClass {
        case .integer: return .integer(int64)
        case .real: return .double(double)
        case .text: return .string(string)
        case .blob: return .data(data)
        case .null: return .null
        }
    }

    /// The value of an attribute of `type` stored so (``AttributeValue/read(as:)``); text in a
    /// binary attribute is its bytes exactly, valid UTF-8 or not.
    package func read(as type: AttributeType) -> AttributeValue {
        if type == .binary, storageClass == .text { return .data(data) }
        return attributeValue.read(as: type)
    }
}
