import CSQLite

/// An error reported by SQLite: the extended result code, SQLite's message and
/// the SQL that failed. Bound values are hidden unless the store was opened
/// with `publicStatementArguments`, so secrets never reach logs.
///
/// ```swift
/// catch let error as SQLiteError where error.primaryCode == SQLiteError.constraint { … }
/// ```
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// The extended result code (`SQLITE_CONSTRAINT_UNIQUE`, `SQLITE_BUSY`, …).
    public let extendedCode: Int32
    /// SQLite's message.
    public let message: String
    /// The statement that failed, if any.
    public let sql: String?
    /// The bound values, only when the connection shows them.
    public let arguments: String?

    /// The primary result code (the low byte of the extended one).
    public var primaryCode: Int32 { extendedCode & 0xff }

    /// The database file is locked (`SQLITE_BUSY`).
    public static let busy = SQLITE_BUSY
    /// A table is locked (`SQLITE_LOCKED`).
    public static let locked = SQLITE_LOCKED
    /// A constraint failed (`SQLITE_CONSTRAINT`).
    public static let constraint = SQLITE_CONSTRAINT
    /// The file is not a database (`SQLITE_NOTADB`).
    public static let notADatabase = SQLITE_NOTADB
    /// The file cannot be opened (`SQLITE_CANTOPEN`).
    public static let cantOpen = SQLITE_CANTOPEN
    /// A write to a read-only database (`SQLITE_READONLY`).
    public static let readOnly = SQLITE_READONLY
    /// The database file is damaged (`SQLITE_CORRUPT`).
    public static let corrupt = SQLITE_CORRUPT
    /// The disk is full (`SQLITE_FULL`).
    public static let full = SQLITE_FULL
    /// The operating system reported an I/O error (`SQLITE_IOERR`).
    public static let ioError = SQLITE_IOERR
    /// The operation was interrupted (`SQLITE_INTERRUPT`).
    public static let interrupt = SQLITE_INTERRUPT
    public static let constraintUnique: Int32 = 2067  // SQLITE_CONSTRAINT | (8 << 8); the C macro is not imported
    public static let constraintPrimaryKey: Int32 = 1555  // SQLITE_CONSTRAINT | (6 << 8)
    public static let constraintNotNull: Int32 = 1299  // SQLITE_CONSTRAINT | (5 << 8)

    init(code: Int32, message: String, sql: String? = nil, arguments: String? = nil) {
        self.extendedCode = code
        self.message = message
        self.sql = sql
        self.arguments = arguments
    }

    public var description: String {
        var text = "SQLite error \(extendedCode): \(message)"
        if let sql { text += " while executing `\(sql)`" }
        if let arguments { text += " with \(arguments)" }
        return text
    }
}
