/// A column's type affinity, by SQLite's rules for its declared type (section 3.1 of
/// SQLite's datatype page): what SQLite converts a value to as it stores it there.
///
/// ```swift
/// ColumnAffinity(declared: "DATETIME")   // .numeric: '20240501' is stored as an integer
/// ```
enum ColumnAffinity: Equatable {
    case integer, text, blob, real, numeric

    /// The affinity of a column declared `declared` (empty for an untyped column).
    init(declared: String) {
        let declared = declared.uppercased()
        if declared.contains("INT") {
            self = .integer
        } else if ["CHAR", "CLOB", "TEXT"].contains(where: declared.contains) {
            self = .text
        } else if declared.contains("BLOB") || declared.isEmpty {
            self = .blob
        } else if ["REAL", "FLOA", "DOUB"].contains(where: declared.contains) {
            self = .real
        } else {
            self = .numeric
        }
    }

    /// Whether text given to the column is stored as that text: TEXT affinity, or none
    /// (`BLOB`, untyped). Any other may store text that looks like a number as the number.
    var keepsText: Bool { self == .text || self == .blob }
}
