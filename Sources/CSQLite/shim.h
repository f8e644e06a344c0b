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
