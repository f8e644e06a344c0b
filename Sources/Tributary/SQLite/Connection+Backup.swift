import CSQLite
import Foundation

extension Connection {
    /// Copies this connection's database into a new WAL database at `path` with SQLite's
    /// online backup (pages copied while other connections go on writing; a step that finds
    /// the source locked waits, up to `busyTimeout`), then checkpoints the copy whole.
    func backup(toPath path: String, busyTimeout: TimeInterval) throws {
        let target = try Connection(path: path, options: ConnectionOptions(busyTimeout: busyTimeout))
        try target.execute("PRAGMA journal_mode = WAL")
        guard let backup = sqlite3_backup_init(target.handle, "main", handle, "main") else {
            throw target.error(SQLITE_ERROR, sql: nil)
        }
        let deadline = Date(timeIntervalSinceNow: busyTimeout)
        var rc: Int32
        repeat {
            rc = sqlite3_backup_step(backup, -1)
            if rc == SQLITE_BUSY || rc == SQLITE_LOCKED {
                if Date() > deadline { break }
                usleep(10_000)
            }
        } while rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED
        sqlite3_backup_finish(backup)
        if rc != SQLITE_DONE { throw SQLiteError(code: rc, message: String(cString: sqlite3_errstr(rc))) }
        try target.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }
}
