import Foundation

/// A change of an attribute's type that an explicit migration makes in place, value by
/// value, reading text as Tributary reads it everywhere (``AttributeValue/parse(_:as:)``):
/// `"42"` becomes 42, `" 7 "` becomes 7, `"4x"` does not convert.
///
/// | from | to | values that convert |
/// |---|---|---|
/// | integer | double, string | all |
/// | double | string | all |
/// | double | integer | whole numbers |
/// | string | integer, double | numbers written in full (`42`, `-1.5e3`); not `nan` or `inf` |
/// | bool | integer | all (0 and 1) |
/// | integer | bool | 0 and 1 |
/// | date | double | all (seconds since 1970) |
/// | double | date | seconds within the years 0 to 9999 |
/// | uuid | string | all |
/// | string | uuid | UUIDs (stored lowercase) |
///
/// Other changes (string to binary, date to string, …) are refused.
struct TypeConversion: Equatable {
    let from: AttributeType
    let to: AttributeType

    private static let supported: Set<String> = [
        "integer>double", "integer>string", "double>string", "double>integer", "string>integer", "string>double",
        "bool>integer", "integer>bool", "date>double", "double>date", "uuid>string", "string>uuid",
    ]

    /// The conversion from `from` to `to`, or nil when SQLite cannot make it value by value.
    init?(from: AttributeType, to: AttributeType) {
        guard Self.supported.contains("\(from.rawValue)>\(to.rawValue)") else { return nil }
        self.from = from
        self.to = to
    }

    /// Whether the column's declared type (its affinity) changes: the values then move to a
    /// new column of the new type, which takes the old one's name.
    var changesColumn: Bool { from.sqlType != to.sqlType }

    /// Whether stored values change; otherwise only the check that they all convert runs.
    var rewritesValues: Bool { changesColumn || to == .uuid }

    /// The SQL converting `column` (quoted): NULL for a value that does not convert.
    func sql(_ column: String) -> String { "\(SQLFunctions.convert)(\(column), '\(to.rawValue)')" }

    /// `value`, as SQLite holds it (integer, double, string or data), as the stored form of
    /// a value of `type`; nil when it does not convert.
    static func convert(_ value: AttributeValue, to type: AttributeType) -> AttributeValue? {
        switch type {
        case .integer: return integer(value).map { .integer($0) }
        case .double: return number(value).map { .double($0) }
        case .string: return text(value).map { .string($0) }
        case .bool:
            guard case .integer(let i) = value, i == 0 || i == 1 else { return nil }
            return .integer(i)
        case .date:
            guard let seconds = number(value), ISO8601.supportedSeconds.contains(seconds) else { return nil }
            return .double(seconds)
        case .uuid:
            guard case .string(let s) = value, let uuid = UUID(uuidString: s.trimmingCharacters(in: .whitespaces)) else { return nil }
            return .string(uuid.uuidString.lowercased())
        case .binary:
            return nil
        }
    }

    private static func integer(_ value: AttributeValue) -> Int64? {
        switch value {
        case .integer(let i): return i
        case .double(let d): return d.rounded() == d ? Int64(exactly: d) : nil
        case .string(let s): return Int64(s.trimmingCharacters(in: .whitespaces))
        default: return nil
        }
    }

    private static func number(_ value: AttributeValue) -> Double? {
        switch value {
        case .integer(let i): return Double(i)
        case .double(let d): return d
        case .string(let s): return Double(s.trimmingCharacters(in: .whitespaces)).flatMap { $0.isFinite ? $0 : nil }
        default: return nil
        }
    }

    private static func text(_ value: AttributeValue) -> String? {
        switch value {
        case .string(let s): return s
        case .integer(let i): return String(i)
        case .double(let d): return "\(d)"
        default: return nil
        }
    }
}
