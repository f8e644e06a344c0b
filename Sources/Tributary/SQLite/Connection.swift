import CSQLite
import Foundation

/// How a connection is opened.
package struct ConnectionOptions: Sendable {
    package var readOnly = false
    package var create = true
    package var busyTimeout: TimeInterval = 5
    /// `true` for memdb URIs.
    package var isURI = false
    package var publicStatementArguments = false
    /// Statement logging (`TRIBUTARY_SQL_DEBUG` unless told otherwise).
    var sqlDebug = SQLDebugLog.fromEnvironment()

    /// Options; the defaults open read-write, create when missing, wait 5 s for a lock.
    package init(readOnly: Bool = false, create: Bool = true, busyTimeout: TimeInterval = 5, isURI: Bool = false, publicStatementArguments: Bool = false) {
        self.readOnly = readOnly
        self.create = create
        self.busyTimeout = busyTimeout
        self.isURI = isURI
        self.publicStatementArguments = publicStatementArguments
    }

    /// The longest busy timeout accepted: one day, in seconds.
    package static let maximumBusyTimeout: TimeInterval = 86_400

    /// Refuses a busy timeout that is not a number of seconds from 0 to ``maximumBusyTimeout``
    /// (NaN, infinities, negative or huge values), which SQLite's milliseconds cannot hold.
    package static func checkBusyTimeout(_ seconds: TimeInterval, place: String) throws {
        guard seconds >= 0, seconds <= maximumBusyTimeout else {
            throw TributaryError(.invalidInput, "busy timeout \(seconds) is not a number of seconds from 0 to \(Int(maximumBusyTimeout))", location: place,
                                 hint: "give the seconds to wait for another writer's lock, such as 5")
        }
    }

    /// The same, with statement logging.
    init(readOnly: Bool = false, create: Bool = true, busyTimeout: TimeInterval = 5, isURI: Bool = false, sqlDebug: SQLDebugLog) {
        self.init(readOnly: readOnly, create: create, busyTimeout: busyTimeout, isURI: isURI)
        self.sqlDebug = sqlDebug
    }
}

/// One SQLite connection: prepared-statement cache, execution, transactions.
///
/// A connection has one owner at a time (the coordinator's writer or one
/// borrower of a pooled reader); it is opened with `SQLITE_OPEN_NOMUTEX`.
// @unchecked Sendable: ownership moves between threads only through the writer's
// mutex or the reader pool, which hand it to exactly one user at a time.
package final class Connection: @unchecked Sendable {
    let handle: OpaquePointer
    let path: String
    let options: ConnectionOptions
    private var statementCache: [String: Statement] = [:]
    /// Logs statements when SQL debugging is on; kept alive for SQLite's callback.
    private var tracer: SQLTracer?

    /// SQLite's process-wide settings, made once before the first connection opens:
    /// memory statistics off (``tributary_config_memstatus``). A program that used SQLite
    /// before keeps its own settings.
    static let processSettings: Int32 = tributary_config_memstatus(0)

    package init(path: String, options: ConnectionOptions) throws {
        try ConnectionOptions.checkBusyTimeout(options.busyTimeout, place: path)
        _ = Self.processSettings
        var flags = SQLITE_OPEN_NOMUTEX
        flags |= options.readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE
        if options.create && !options.readOnly { flags |= SQLITE_OPEN_CREATE }
        if options.isURI { flags |= SQLITE_OPEN_URI }
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            if let db { sqlite3_close_v2(db) }
            throw SQLiteError(code: rc, message: message)
        }
        self.handle = db
        self.path = path
        self.options = options
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, Int32(saturating: options.busyTimeout * 1000))
        SQLFunctions.register(on: db)
        if options.sqlDebug.level > .off { installTracer(SQLTracer(options.sqlDebug, path: path)) }
    }

    /// Logs every statement when it finishes, with its duration: SQLite's start
    /// (`SQLITE_TRACE_STMT`) and end (`SQLITE_TRACE_PROFILE`) events, timed with
    /// the monotonic clock (SQLite's own profile time counts whole milliseconds).
    private func installTracer(_ tracer: SQLTracer) {
        self.tracer = tracer
        sqlite3_trace_v2(handle, UInt32(SQLITE_TRACE_STMT | SQLITE_TRACE_PROFILE), { event, context, statement, _ in
            guard let context, let statement else { return 0 }
            let tracer = Unmanaged<SQLTracer>.fromOpaque(context).takeUnretainedValue()
            let stmt = OpaquePointer(statement)
            if event == UInt32(SQLITE_TRACE_STMT) {
                tracer.started(UnsafeRawPointer(statement))
                return 0
            }
            let sql: String
            if tracer.level >= .values, let expanded = sqlite3_expanded_sql(stmt) {
                sql = String(cString: expanded)
                sqlite3_free(expanded)
            } else if let text = sqlite3_sql(stmt) {
                sql = String(cString: text)
            } else {
                return 0
            }
            tracer.finished(UnsafeRawPointer(statement), sql: sql)
            return 0
        }, Unmanaged.passUnretained(tracer).toOpaque())
    }

    deinit {
        statementCache.removeAll()
        sqlite3_close_v2(handle)
    }

    // MARK: Errors

    func error(_ code: Int32, sql: String?) -> SQLiteError {
        SQLiteError(code: sqlite3_extended_errcode(handle), message: String(cString: sqlite3_errmsg(handle)), sql: sql)
            .withCode(fallback: code)
    }

    // MARK: Executing

    /// Runs one or more statements with no arguments and no results.
    package func execute(_ sql: String) throws {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(errorMessage)
            throw SQLiteError(code: sqlite3_extended_errcode(handle), message: message, sql: sql)
        }
    }

    /// Runs one statement with arguments, discarding results.
    package func execute(_ sql: String, _ arguments: [AttributeValue]) throws {
        let statement = try cachedStatement(sql)
        try statement.bind(arguments)
        try statement.run()
    }

    /// A prepared statement from the cache, reset and with its bindings cleared.
    package func cachedStatement(_ sql: String) throws -> Statement {
        if let statement = statementCache[sql] {
            statement.reset()
            return statement
        }
        let statement = try Statement(connection: self, sql: sql)
        statementCache[sql] = statement
        return statement
    }

    /// A new prepared statement, not cached (for one-off SQL).
    package func makeStatement(_ sql: String) throws -> Statement {
        try Statement(connection: self, sql: sql)
    }

    /// The first column of the first row, or nil.
    package func scalar(_ sql: String, _ arguments: [AttributeValue] = []) throws -> AttributeValue? {
        let statement = try cachedStatement(sql)
        try statement.bind(arguments)
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return statement.value(at: 0)
    }

    package var changes: Int { Int(sqlite3_changes64(handle)) }
    var lastInsertRowID: Int64 {
        get { sqlite3_last_insert_rowid(handle) }
        set { sqlite3_set_last_insert_rowid(handle, newValue) }
    }
    package var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    package func transaction<T>(_ kind: String = "IMMEDIATE", _ body: () throws -> T) throws -> T {
        precondition(!isInTransaction, "Tributary: a transaction is already open on this connection")
        try execute("BEGIN \(kind)")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            if isInTransaction { try? execute("ROLLBACK") }
            throw error
        }
    }
}

extension SQLiteError {
    func withCode(fallback: Int32) -> SQLiteError {
        code.rawValue == SQLITE_OK ? SQLiteError(code: fallback, message: message, sql: sql, arguments: arguments) : self
    }
}
