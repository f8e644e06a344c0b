import CSQLiteBench
import Foundation

private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// The baseline: prepared statements straight through SQLite's C API, with the
/// same pragmas (WAL, synchronous=NORMAL), table and indexes as Tributary's.
final class RawSQLite {
    let db: OpaquePointer

    init(path: String) {
        var handle: OpaquePointer?
        sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        db = handle!
        exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")
    }

    deinit { sqlite3_close_v2(db) }

    func exec(_ sql: String) {
        let rc = sqlite3_exec(db, sql, nil, nil, nil)
        precondition(rc == SQLITE_OK, String(cString: sqlite3_errmsg(db)))
    }

    func prepare(_ sql: String) -> OpaquePointer {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v2(db, sql, -1, &statement, nil)
        precondition(rc == SQLITE_OK, String(cString: sqlite3_errmsg(db)))
        return statement!
    }

    static func bind(_ statement: OpaquePointer, _ index: Int32, _ text: String) {
        var text = text
        _ = text.withUTF8 { sqlite3_bind_text(statement, index, UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), Int32($0.count), transient) }
    }

    /// Inserts the workload in transactions of `batch` rows; returns seconds.
    /// With `createSchema` false, the table is the store's own (a store Tributary made).
    static func insertPosts(at path: String, rows: Int = Workload.rows, batch: Int = Workload.batch, createSchema: Bool = true) -> Double {
        let raw = RawSQLite(path: path)
        if createSchema { raw.exec(Workload.schema) }
        return raw.insertWorkload(#"INSERT INTO "Post" ("title", "content", "externalID", "createdAt") VALUES (?, ?, ?, ?)"#, rows: rows, batch: batch)
    }

    /// Inserts `rows` items into an `Item` table (`name` holds a post's external ID),
    /// ``Workload/batch`` rows a transaction; returns the seconds.
    static func insertItems(at path: String, rows: Int) -> Double {
        RawSQLite(path: path).insertWorkload(#"INSERT INTO "Item" ("title", "content", "name", "createdAt") VALUES (?, ?, ?, ?)"#, rows: rows, batch: Workload.batch)
    }

    /// Runs `sql`, whose four parameters take a post's title, content, external ID and
    /// creation time, for posts 0 to `rows - 1`, `batch` a transaction; returns the seconds.
    func insertWorkload(_ sql: String, rows: Int, batch: Int) -> Double {
        let insert = prepare(sql)
        defer { sqlite3_finalize(insert) }
        return timedTransactions(rows: rows, batch: batch) { k in
            Self.bind(insert, 1, Workload.title(k))
            Self.bind(insert, 2, Workload.content(k))
            Self.bind(insert, 3, Workload.externalID(k))
            sqlite3_bind_double(insert, 4, Workload.createdAt(k))
            precondition(sqlite3_step(insert) == SQLITE_DONE)
            sqlite3_reset(insert)
        }
    }

    /// Runs `step` for rows 0 to `rows - 1`, `batch` rows a transaction; returns the seconds.
    func timedTransactions(rows: Int, batch: Int, _ step: (Int) -> Void) -> Double {
        Harness.time {
            var j = 0
            while j < rows {
                exec("BEGIN")
                for k in j..<min(j + batch, rows) { step(k) }
                exec("COMMIT")
                j += batch
            }
        }
    }

    /// Inserts `rows` posts untimed, then changes every title, `batch` rows a transaction
    /// (`UPDATE … SET title = ? WHERE _pk = ?`); returns the updates' seconds.
    static func updatePosts(at path: String, rows: Int, batch: Int = Workload.batch) -> Double {
        _ = insertPosts(at: path, rows: rows, batch: batch, createSchema: false)
        let raw = RawSQLite(path: path)
        let update = raw.prepare(#"UPDATE "Post" SET "title" = ? WHERE "_pk" = ?"#)
        defer { sqlite3_finalize(update) }
        return raw.timedTransactions(rows: rows, batch: batch) { k in
            bind(update, 1, "Edited \(k)")
            sqlite3_bind_int64(update, 2, Int64(k + 1))
            precondition(sqlite3_step(update) == SQLITE_DONE)
            sqlite3_reset(update)
        }
    }

    /// Reads every row, every column into Swift values; returns (rows, seconds).
    static func fetchPosts(at path: String) -> (Int, Double) {
        let raw = RawSQLite(path: path)
        let select = raw.prepare(#"SELECT "_pk", "title", "content", "externalID", "createdAt", "updatedAt" FROM "Post""#)
        defer { sqlite3_finalize(select) }
        var count = 0
        var checksum = 0
        let seconds = Harness.time {
            while sqlite3_step(select) == SQLITE_ROW {
                let pk = sqlite3_column_int64(select, 0)
                let title = String(cString: sqlite3_column_text(select, 1))
                let content = String(cString: sqlite3_column_text(select, 2))
                let externalID = String(cString: sqlite3_column_text(select, 3))
                let createdAt = sqlite3_column_double(select, 4)
                let updatedAt = sqlite3_column_double(select, 5)
                checksum &+= Int(pk) &+ title.utf8.count &+ content.utf8.count &+ externalID.utf8.count &+ Int(createdAt) &+ Int(updatedAt)
                count += 1
            }
        }
        precondition(checksum != 0)
        return (count, seconds)
    }

    /// Looks up `ids` one by one with `SELECT … WHERE _pk = ?`, reading every
    /// column into Swift values (as a fault does); returns seconds.
    static func selectByID(at path: String, ids: [Int64]) -> Double {
        let raw = RawSQLite(path: path)
        let select = raw.prepare(#"SELECT "_version", "title", "content", "externalID", "createdAt" FROM "Post" WHERE "_pk" = ?"#)
        defer { sqlite3_finalize(select) }
        var checksum = 0
        let seconds = Harness.time {
            for id in ids {
                sqlite3_bind_int64(select, 1, id)
                if sqlite3_step(select) == SQLITE_ROW {
                    let version = sqlite3_column_int64(select, 0)
                    let title = String(cString: sqlite3_column_text(select, 1))
                    let content = String(cString: sqlite3_column_text(select, 2))
                    let externalID = String(cString: sqlite3_column_text(select, 3))
                    let createdAt = sqlite3_column_double(select, 4)
                    checksum &+= Int(version) &+ title.utf8.count &+ content.utf8.count &+ externalID.utf8.count &+ Int(createdAt)
                }
                sqlite3_reset(select)
            }
        }
        precondition(checksum != 0)
        return seconds
    }
}

/// Thin helpers for one-off statements in other baselines.
func sqlite3Step(_ statement: OpaquePointer) -> Bool { sqlite3_step(statement) == SQLITE_ROW }
func sqlite3ColumnInt64(_ statement: OpaquePointer, _ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }
func sqlite3Finalize(_ statement: OpaquePointer) { sqlite3_finalize(statement) }
