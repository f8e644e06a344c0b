import CSQLite

extension Connection {
    /// Whether this SQLite runs TEMP triggers on a connection whose main-schema triggers are
    /// off (``disableMainTriggers()``): since 3.35.
    static var canDisableMainTriggersOnly: Bool { sqlite3_libversion_number() >= 3_035_000 }

    /// Whether this SQLite drops columns (`ALTER TABLE … DROP COLUMN`, 3.35), as explicit
    /// migrations do; the version it is, for the refusal.
    static var canDropColumns: (Bool, String) { (sqlite3_libversion_number() >= 3_035_000, String(cString: sqlite3_libversion())) }

    /// Stops the triggers stored in the database from running on this connection; TEMP
    /// triggers still run (`SQLITE_DBCONFIG_ENABLE_TRIGGER`). A store's writer does this so
    /// that the triggers other programs' writes fire are not paid for by its own writes.
    func disableMainTriggers() throws {
        guard Self.canDisableMainTriggersOnly, tributary_set_triggers_enabled(handle, 0) == 0 else {
            throw SQLiteError(code: SQLITE_MISUSE, message: "this SQLite (\(String(cString: sqlite3_libversion()))) cannot turn off stored triggers alone; 3.35 or newer is needed")
        }
    }

    /// Whether the triggers stored in the database run on this connection (a store's writer
    /// turns them off: ``disableMainTriggers()``).
    var runsMainTriggers: Bool { tributary_set_triggers_enabled(handle, -1) == 1 }

    /// Runs `body` with the stored triggers on, as they run for any other program, and turns
    /// them off again after (left on when they were on). SQLite re-prepares the connection's
    /// statements at each switch.
    func withMainTriggers<T>(_ body: () throws -> T) throws -> T {
        if runsMainTriggers { return try body() }
        guard tributary_set_triggers_enabled(handle, 1) == 1 else {
            throw SQLiteError(code: SQLITE_MISUSE, message: "could not turn on the stored triggers of \(path)")
        }
        defer { _ = tributary_set_triggers_enabled(handle, 0) }
        return try body()
    }
}
