import Foundation

extension AttributeValue {
    /// The value written as text: ISO 8601 for dates, base64 for data, lowercase UUIDs.
    /// The inverse of ``AttributeValue/parse(_:as:)``.
    public var storedText: String {
        switch self {
        case .string(let s): return s
        default: return description
        }
    }

    /// Reads a value of `type` from text, as given on a command line (`--set count=3`)
    /// or stored as a default in a model file.
    ///
    /// ```swift
    /// try AttributeValue.parse("2024-05-01T00:00:00Z", as: .date)   // .date(…)
    /// try AttributeValue.parse("yes", as: .bool)                    // .bool(true)
    /// ```
    public static func parse(_ text: String, as type: AttributeType) throws -> AttributeValue {
        func fail() -> TributaryError {
            TributaryError(.typeMismatch, "\"\(text)\" is not a valid \(type.rawValue)", hint: type.formatHint)
        }
        switch type {
        case .string: return .string(text)
        case .integer:
            guard let i = Int64(text.trimmingCharacters(in: .whitespaces)) else { throw fail() }
            return .integer(i)
        case .double:
            guard let d = Double(text.trimmingCharacters(in: .whitespaces)) else { throw fail() }
            return .double(d)
        case .bool:
            switch text.lowercased() {
            case "true", "yes", "1": return .bool(true)
            case "false", "no", "0": return .bool(false)
            default: throw fail()
            }
        case .date:
            if let date = ISO8601.date(from: text) { return .date(date) }
            if let seconds = Double(text) { return .date(Date(timeIntervalSince1970: seconds)) }
            throw fail()
        case .uuid:
            guard let uuid = UUID(uuidString: text) else { throw fail() }
            return .uuid(uuid)
        case .binary:
            guard let data = Data(base64Encoded: text) else { throw fail() }
            return .data(data)
        }
    }

    /// Whether the value is stored as `type` already (nil is not: optionality is checked apart;
    /// nor is a date outside ``ISO8601/supportedSeconds``, which the validator refuses).
    @inline(__always)
    func matches(_ type: AttributeType) -> Bool {
        switch (self, type) {
        case (.date(let date), .date): return ISO8601.isSupported(date)
        case (.string, .string), (.integer, .integer), (.double, .double), (.bool, .bool), (.uuid, .uuid), (.data, .binary): return true
        default: return false
        }
    }

    /// Whether SQLite stores the value in a class of its own (text, integer, real or blob),
    /// whatever its attribute's type: what a column may hold as another program stored it.
    var isStoredAsGiven: Bool {
        switch self {
        case .string, .integer, .double, .data: return true
        default: return false
        }
    }

    /// The value of an attribute of `type` whose column holds this value as SQLite stored it
    /// (another program may store any class in any column): converted where that loses
    /// nothing (``coerced(to:)``), text in a binary attribute as its UTF-8 bytes, anything
    /// else as stored (text in an integer column, 7 in a bool one, a blob or 42 in a text
    /// one). Fetches, Tributary's own history and the capture of other programs' writes all
    /// read stored values by this one rule, so they agree.
    package func read(as type: AttributeType) -> AttributeValue {
        if type == .binary, case .string(let text) = self { return .data(Data(text.utf8)) }
        return coerced(to: type) ?? self
    }

    /// This value converted to `type` where the conversion loses nothing
    /// (an integer to a double, an ISO 8601 string to a date, 0/1 to a bool); nil otherwise.
    public func coerced(to type: AttributeType) -> AttributeValue? {
        switch (self, type) {
        case (.null, _): return .null
        case (.string, .string), (.integer, .integer), (.double, .double), (.bool, .bool),
             (.date, .date), (.uuid, .uuid), (.data, .binary):
            return self
        // Only where the double is the integer: above 2^53 most are not (9007199254740993 would be
        // ...992). -2^63 is, but SQLite does not make that real the integer again (NUMERIC affinity
        // stops short of it), so readers keep it as the integer and a replica writes it so.
        case (.integer(let i), .double): return i == .min ? nil : Double(exactly: i).map { .double($0) }
        case (.double(let d), .integer):
            guard d.rounded() == d, let i = Int64(exactly: d) else { return nil }
            return .integer(i)
        case (.integer(let i), .bool) where i == 0 || i == 1: return .bool(i == 1)
        case (.bool(let b), .integer): return .integer(b ? 1 : 0)
        case (.string(let s), .date): return ISO8601.date(from: s).map { .date($0) }
        case (.integer(let i), .date): return .date(Date(timeIntervalSince1970: Double(i)))
        case (.double(let d), .date): return .date(Date(timeIntervalSince1970: d))
        case (.string(let s), .uuid): return UUID(uuidString: s).map { .uuid($0) }
        case (.string(let s), .binary): return Data(base64Encoded: s).map { .data($0) }
        default: return nil
        }
    }
}

extension AttributeType {
    /// How a value of this type is written in NDJSON and on the command line.
    var formatHint: String {
        switch self {
        case .string: return "give a string"
        case .integer: return "give a whole number"
        case .double: return "give a number"
        case .bool: return "give true or false"
        case .date: return "give an ISO 8601 date in UTC such as 2024-05-01T12:00:00Z, or seconds since 1970"
        case .uuid: return "give a UUID string such as 6f9619ff-8b86-d011-b42d-00cf4fc964ff"
        case .binary: return "give base64-encoded data"
        }
    }
}
