/// The type of an attribute and how it is stored in SQLite.
///
/// ```swift
/// Attribute("createdAt", .date)
/// ```
public enum AttributeType: String, Sendable, Codable, CaseIterable {
    /// Text; stored as TEXT.
    case string
    /// A 64-bit integer; stored as INTEGER.
    case integer
    /// A double; stored as REAL.
    case double
    /// A boolean; stored as INTEGER 0 or 1.
    case bool
    /// A date; stored as REAL seconds since 1970 (UTC).
    case date
    /// A UUID; stored as lowercase TEXT.
    case uuid
    /// Binary data; stored as BLOB.
    case binary

    /// The SQLite column type.
    var sqlType: String {
        switch self {
        case .string, .uuid: return "TEXT"
        case .integer, .bool: return "INTEGER"
        case .double, .date: return "REAL"
        case .binary: return "BLOB"
        }
    }

    /// Accepted spellings in YAML model files, besides the raw values.
    static func named(_ text: String) -> AttributeType? {
        switch text.lowercased() {
        case "string", "text": return .string
        case "integer", "int", "int64", "integer64", "integer 64", "int16", "integer16", "integer 16", "int32", "integer32", "integer 32": return .integer
        case "double", "float", "real": return .double
        case "bool", "boolean": return .bool
        case "date": return .date
        case "uuid": return .uuid
        case "binary", "data", "binarydata", "blob": return .binary
        default: return nil
        }
    }
}
