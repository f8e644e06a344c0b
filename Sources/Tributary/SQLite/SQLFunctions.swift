import CSQLite
import Foundation

private let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// SQL functions written in Swift that Tributary registers on every connection it
/// opens, for derived attributes: full Unicode lowercase and canonical folding
/// (SQLite's own `lower()` folds ASCII letters only). A program that opens the
/// store without Tributary (the `sqlite3` shell) lacks them, so it cannot write
/// a table whose triggers call them ("no such function").
enum SQLFunctions {
    /// `tributary_lower(text)`: Swift's `lowercased()`.
    static let lowercase = "tributary_lower"
    /// `tributary_canonical(text)`: lowercase, without diacritics, in NFC.
    static let canonical = "tributary_canonical"
    /// `tributary_matches(text, pattern, caseInsensitive)`: a predicate's `MATCHES` (``PredicateRegex``).
    static let matches = "tributary_matches"
    /// `tributary_convert(value, type)`: the value as an attribute type's stored form, or NULL
    /// (``TypeConversion``, for explicit migrations).
    static let convert = "tributary_convert"

    /// Registers the functions on `db`.
    static func register(on db: OpaquePointer) {
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS
        sqlite3_create_function_v2(db, lowercase, 1, flags, nil, { context, _, values in
            SQLFunctions.apply(context, values) { $0.lowercased() }
        }, nil, nil, nil)
        sqlite3_create_function_v2(db, canonical, 1, flags, nil, { context, _, values in
            SQLFunctions.apply(context, values, SQLFunctions.canonicalize)
        }, nil, nil, nil)
        sqlite3_create_function_v2(db, matches, 3, flags, nil, { context, _, values in
            SQLFunctions.match(context, values)
        }, nil, nil, nil)
        sqlite3_create_function_v2(db, convert, 2, flags, nil, { context, _, values in
            SQLFunctions.convert(context, values)
        }, nil, nil, nil)
    }

    /// `text MATCHES pattern`: NULL text does not match; a bad pattern or an over-long text is an SQL error.
    private static func match(_ context: OpaquePointer?, _ values: UnsafeMutablePointer<OpaquePointer?>?) {
        guard let values, let textValue = values[0], sqlite3_value_type(textValue) != SQLITE_NULL, let text = sqlite3_value_text(textValue),
              let patternValue = values[1], let pattern = sqlite3_value_text(patternValue) else {
            sqlite3_result_int(context, 0)
            return
        }
        let string = String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(textValue))), as: UTF8.self)
        let regex = String(decoding: UnsafeBufferPointer(start: pattern, count: Int(sqlite3_value_bytes(patternValue))), as: UTF8.self)
        do {
            sqlite3_result_int(context, try PredicateRegex.matches(string, regex, caseInsensitive: sqlite3_value_int(values[2]) != 0) ? 1 : 0)
        } catch let error as TributaryError {
            sqlite3_result_error(context, error.message, -1)
        } catch {
            sqlite3_result_error(context, "MATCHES failed", -1)
        }
    }

    /// Case- and diacritic-folded text in Unicode canonical composition, for search:
    /// "Crème BRÛLÉE" becomes "creme brulee".
    static func canonicalize(_ text: String) -> String {
        let decomposed = text.lowercased().decomposedStringWithCanonicalMapping
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: decomposed.unicodeScalars.filter { $0.properties.generalCategory != .nonspacingMark })
        return String(scalars).precomposedStringWithCanonicalMapping
    }

    private static func apply(_ context: OpaquePointer?, _ values: UnsafeMutablePointer<OpaquePointer?>?, _ transform: (String) -> String) {
        guard let value = values?[0], sqlite3_value_type(value) != SQLITE_NULL, let text = sqlite3_value_text(value) else {
            sqlite3_result_null(context)
            return
        }
        let count = Int(sqlite3_value_bytes(value))
        var result = transform(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        result.withUTF8 { buffer in
            guard !buffer.isEmpty else { return sqlite3_result_text(context, "", 0, SQLITE_TRANSIENT) }
            sqlite3_result_text(context, UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self), Int32(buffer.count), SQLITE_TRANSIENT)
        }
    }
}
