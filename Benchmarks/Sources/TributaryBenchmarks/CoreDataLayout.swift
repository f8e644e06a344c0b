import CSQLiteBench
import Foundation

/// Core Data's history layout, in the C API: one transaction row per save and one
/// row per change carrying only IDs (entity, primary key, change type).
enum CoreDataLayout {
    /// Inserts `rows` posts in transactions of `batch`, recording history in Core Data's layout when `tracked`.
    static func insertPosts(at path: String, rows: Int, batch: Int, tracked: Bool) -> Double {
        let raw = RawSQLite(path: path)
        raw.exec(Workload.schema)
        raw.exec("""
            CREATE TABLE ZTRANSACTION (Z_PK INTEGER PRIMARY KEY, ZTIMESTAMP REAL, ZAUTHOR TEXT, ZCONTEXTNAME TEXT, ZPROCESSID TEXT);
            CREATE TABLE ZCHANGE (Z_PK INTEGER PRIMARY KEY, ZTRANSACTIONID INTEGER, ZENTITY INTEGER, ZENTITYPK INTEGER, ZCHANGETYPE INTEGER);
            CREATE INDEX ZCHANGE_TX ON ZCHANGE (ZTRANSACTIONID);
            """)
        let insert = raw.prepare(#"INSERT INTO "Post" ("title", "content", "externalID", "createdAt") VALUES (?, ?, ?, ?)"#)
        let transaction = raw.prepare("INSERT INTO ZTRANSACTION (ZTIMESTAMP, ZAUTHOR, ZCONTEXTNAME, ZPROCESSID) VALUES (?, 'importer', 'bench', '1')")
        let change = raw.prepare("INSERT INTO ZCHANGE (ZTRANSACTIONID, ZENTITY, ZENTITYPK, ZCHANGETYPE) VALUES (?, 1, ?, 0)")
        defer { sqlite3_finalize(insert); sqlite3_finalize(transaction); sqlite3_finalize(change) }
        return Harness.time {
            var j = 0
            while j < rows {
                raw.exec("BEGIN")
                var tx: Int64 = 0
                if tracked {
                    sqlite3_bind_double(transaction, 1, Date().timeIntervalSince1970)
                    _ = sqlite3_step(transaction)
                    sqlite3_reset(transaction)
                    tx = sqlite3_last_insert_rowid(raw.db)
                }
                for k in j..<min(j + batch, rows) {
                    RawSQLite.bind(insert, 1, Workload.title(k))
                    RawSQLite.bind(insert, 2, Workload.content(k))
                    RawSQLite.bind(insert, 3, Workload.externalID(k))
                    sqlite3_bind_double(insert, 4, Workload.createdAt(k))
                    precondition(sqlite3_step(insert) == SQLITE_DONE)
                    sqlite3_reset(insert)
                    if tracked {
                        let pk = sqlite3_last_insert_rowid(raw.db)
                        sqlite3_bind_int64(change, 1, tx)
                        sqlite3_bind_int64(change, 2, pk)
                        _ = sqlite3_step(change)
                        sqlite3_reset(change)
                    }
                }
                raw.exec("COMMIT")
                j += batch
            }
        }
    }
}
