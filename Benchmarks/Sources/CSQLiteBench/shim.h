#include <sqlite3.h>

// The process-wide setting Tributary makes before its first connection (memory statistics
// off), made here before anything opens SQLite, so the C API and GRDB baselines run with it
// too whatever the order of the measurements.
static inline int bench_config_memstatus(int on) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, on);
}
