import CSQLite
import Foundation

private let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

extension SQLFunctions {
    /// `tributary_convert(value, type)`: ``TypeConversion/convert(_:to:)`` in SQL; NULL for
    /// NULL, for a value that does not convert and for an unknown type name.
    static func convert(_ context: OpaquePointer?, _ values: UnsafeMutablePointer<OpaquePointer?>?) {
        guard let values, let value = values[0], let typeValue = values[1], let typeText = sqlite3_value_text(typeValue),
              let type = AttributeType(rawValue: String(cString: typeText)),
              let converted = TypeConversion.convert(read(value), to: type) else {
            sqlite3_result_null(context)
            return
        }
        switch converted {
        case .integer(let i): sqlite3_result_int64(context, i)
        case .double(let d): sqlite3_result_double(context, d)
        case .string(var s):
            s.withUTF8 { buffer in
                guard !buffer.isEmpty else { return sqlite3_result_text(context, "", 0, SQLITE_TRANSIENT) }
                sqlite3_result_text(context, UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self), Int32(buffer.count), SQLITE_TRANSIENT)
            }
        default: sqlite3_result_null(context)
        }
    }

    /// An SQL value as what SQLite holds: integer, double, string, data or null.
    private static func read(_ value: OpaquePointer) -> AttributeValue {
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: return .integer(sqlite3_value_int64(value))
        case SQLITE_FLOAT: return .double(sqlite3_value_double(value))
        case SQLITE_TEXT:
            guard let text = sqlite3_value_text(value) else { return .null }
            return .string(String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(value))), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_value_bytes(value))
            guard count > 0, let bytes = sqlite3_value_blob(value) else { return .data(Data()) }
            return .data(Data(bytes: bytes, count: count))
        default: return .null
        }
    }
}
