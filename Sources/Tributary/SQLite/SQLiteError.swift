import CSQLite

/// An error reported by SQLite: the extended result code, SQLite's message and
/// the SQL that failed. Bound values are hidden unless the store was opened
/// with `publicStatementArguments`, so secrets never reach logs.
///
/// ```swift
/// catch let error as SQLiteError where error.primaryCode == .constraint { … }
/// ```
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// A result code of SQLite's (primary, or extended as `constraintUnique`), as a value.
    public struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// SQLite's number for it.
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }

        /// The primary code of an extended one (its low byte).
        public var primary: ResultCode { ResultCode(rawValue: rawValue & 0xff) }
        /// SQLite's English text for the code.
        public var description: String { String(cString: sqlite3_errstr(rawValue)) }

        /// The database file is locked (`SQLITE_BUSY`).
        public static let busy = ResultCode(rawValue: SQLITE_BUSY)
        /// A table is locked (`SQLITE_LOCKED`).
        public static let locked = ResultCode(rawValue: SQLITE_LOCKED)
        /// A constraint failed (`SQLITE_CONSTRAINT`).
        public static let constraint = ResultCode(rawValue: SQLITE_CONSTRAINT)
        /// The file is not a database (`SQLITE_NOTADB`).
        public static let notADatabase = ResultCode(rawValue: SQLITE_NOTADB)
        /// The file cannot be opened (`SQLITE_CANTOPEN`).
        public static let cantOpen = ResultCode(rawValue: SQLITE_CANTOPEN)
        /// A write to a read-only database (`SQLITE_READONLY`).
        public static let readOnly = ResultCode(rawValue: SQLITE_READONLY)
        /// The database file is damaged (`SQLITE_CORRUPT`).
        public static let corrupt = ResultCode(rawValue: SQLITE_CORRUPT)
        /// The disk is full (`SQLITE_FULL`).
        public static let full = ResultCode(rawValue: SQLITE_FULL)
        /// The operating system reported an I/O error (`SQLITE_IOERR`).
        public static let ioError = ResultCode(rawValue: SQLITE_IOERR)
        /// The operation was interrupted (`SQLITE_INTERRUPT`).
        public static let interrupt = ResultCode(rawValue: SQLITE_INTERRUPT)
        /// A unique constraint failed (`SQLITE_CONSTRAINT_UNIQUE`; the C macro is not imported).
        public static let constraintUnique = ResultCode(rawValue: SQLITE_CONSTRAINT | (8 << 8))
        /// A primary key constraint failed (`SQLITE_CONSTRAINT_PRIMARYKEY`).
        public static let constraintPrimaryKey = ResultCode(rawValue: SQLITE_CONSTRAINT | (6 << 8))
        /// A NOT NULL constraint failed (`SQLITE_CONSTRAINT_NOTNULL`).
        public static let constraintNotNull = ResultCode(rawValue: SQLITE_CONSTRAINT | (5 << 8))
    }

    /// The extended result code (`.constraintUnique`, `.busy`, …).
    public let code: ResultCode
    /// SQLite's message.
    public let message: String
    /// The statement that failed, if any.
    public let sql: String?
    /// The bound values, only when the connection shows them.
    public let arguments: String?

    /// The primary result code (the low byte of the extended one).
    public var primaryCode: ResultCode { code.primary }

    init(code: Int32, message: String, sql: String? = nil, arguments: String? = nil) {
        self.code = ResultCode(rawValue: code)
        self.message = message
        self.sql = sql
        self.arguments = arguments
    }

    public var description: String {
        var text = "SQLite error \(code.rawValue): \(message)"
        if let sql { text += " while executing `\(sql)`" }
        if let arguments { text += " with \(arguments)" }
        return text
    }
}
