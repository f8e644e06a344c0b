// The system SQLite (Debian's libsqlite3-dev) is built with the session
// extension and the pre-update hook; their declarations in sqlite3.h are
// guarded by these macros, so define them before including it.
#ifndef SQLITE_ENABLE_SESSION
#define SQLITE_ENABLE_SESSION 1
#endif
#ifndef SQLITE_ENABLE_PREUPDATE_HOOK
#define SQLITE_ENABLE_PREUPDATE_HOOK 1
#endif
#include <sqlite3.h>

// sqlite3_db_config is variadic, which Swift cannot call: these wrap the two
// uses Tributary has for it. Each returns the setting after the call, or -1.
static inline int tributary_set_triggers_enabled(sqlite3 *db, int enabled) {
    int now = -1;
    return sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, enabled, &now) == SQLITE_OK ? now : -1;
}

// Reads through SQLite's own handle of the database file (journal = 0) or of its
// write-ahead log (journal = 1): closing a descriptor of the database file would drop
// every POSIX lock this process holds on it, so Tributary never opens one itself.
static inline int tributary_read_file(sqlite3 *db, int journal, void *buffer, int amount, sqlite3_int64 offset) {
    sqlite3_file *file = 0;
    int rc = sqlite3_file_control(db, "main", journal ? SQLITE_FCNTL_JOURNAL_POINTER : SQLITE_FCNTL_FILE_POINTER, &file);
    if (rc != SQLITE_OK || file == 0 || file->pMethods == 0) return SQLITE_NOTFOUND;
    return file->pMethods->xRead(file, buffer, amount, offset);
}

// The first region of the connection's own mapping of the -shm file (the wal-index);
// SQLITE_NOTFOUND when the database has none (not WAL, or exclusive locking mode).
static inline int tributary_wal_index_region(sqlite3 *db, volatile void **region) {
    sqlite3_file *file = 0;
    int rc = sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &file);
    if (rc != SQLITE_OK || file == 0 || file->pMethods == 0 || file->pMethods->iVersion < 2 || file->pMethods->xShmMap == 0) return SQLITE_NOTFOUND;
    rc = file->pMethods->xShmMap(file, 0, 32768, 0, region);
    if (rc != SQLITE_OK) return rc;
    return *region == 0 ? SQLITE_NOTFOUND : SQLITE_OK;
}

// The frames in the write-ahead log (mxFrame of the WAL index header), read from the
// connection's own mapping of the -shm file: a hint, read without a lock.
static inline int tributary_wal_frames(sqlite3 *db, unsigned int *frames) {
    volatile void *region = 0;
    int rc = tributary_wal_index_region(db, &region);
    if (rc != SQLITE_OK) return rc;
    *frames = *(const volatile unsigned int *)((const volatile unsigned char *)region + 16);
    return SQLITE_OK;
}

// Copies the wal-index header (the first 48 bytes of the -shm file: SQLite's WalIndexHdr,
// in native byte order, its salts as the log's header has them) into `header`. Read under
// the write lock, it is what every reader trusts: frames up to its mxFrame are committed.
// SQLITE_NOTFOUND when the database has no shared wal-index (not WAL, or exclusive locking).
static inline int tributary_wal_index_header(sqlite3 *db, unsigned char *header) {
    volatile void *region = 0;
    int rc = tributary_wal_index_region(db, &region);
    if (rc != SQLITE_OK) return rc;
    for (int i = 0; i < 48; i++) header[i] = ((const volatile unsigned char *)region)[i];
    return SQLITE_OK;
}

// sqlite3_config is variadic too. Memory statistics make every allocation SQLite makes
// take a process-wide mutex: once a process has a second thread, each of those is an
// atomic operation, a few percent of a history-recording insert. Tributary reads no
// memory statistics. Takes effect only before SQLite is initialized; returns SQLITE_OK
// or SQLITE_MISUSE (already initialized: the setting stays as it is).
static inline int tributary_config_memstatus(int on) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, on);
}
