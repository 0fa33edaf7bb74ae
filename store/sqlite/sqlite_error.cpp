// Translation of SQLite result codes; see sqlite_error.hpp.
#include "store/sqlite/sqlite_error.hpp"

#include <sqlite3.h>

namespace mneme {

errc storage_errc(int sqlite_rc) {
  switch (sqlite_rc & 0xff) {
    case SQLITE_FULL: return errc::storage_disk_full;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB: return errc::storage_corrupt;
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return errc::storage_locked;
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH: return errc::storage_readonly;
    case SQLITE_CANTOPEN: return errc::storage_cant_open;
    default: return errc::storage_failed;
  }
}

caf::error sqlite_failure(sqlite3* db, int rc, const std::string& what) {
  std::string detail = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  return caf::make_error(storage_errc(rc),
                         what + ": " + detail + " (code " + std::to_string(rc) + ")");
}

} // namespace mneme
