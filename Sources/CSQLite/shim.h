// SQLite 3 (Debian: libsqlite3-dev), used through its C API so that the state store needs no
// Foundation. SQLITE_TRANSIENT is a cast macro Swift cannot import; this wrapper binds text
// that SQLite copies before the call returns.
#include <sqlite3.h>

static inline int beacond_sqlite3_bind_text(sqlite3_stmt *statement, int index, const char *text, int bytes) {
    return sqlite3_bind_text(statement, index, text, bytes, SQLITE_TRANSIENT);
}

// sqlite3_db_config is variadic, which Swift cannot call. With `on` 1, the next VACUUM empties
// the database, even a corrupt one; 0 switches that back off.
static inline int beacond_sqlite3_reset_database(sqlite3 *db, int on) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_RESET_DATABASE, on, 0);
}
