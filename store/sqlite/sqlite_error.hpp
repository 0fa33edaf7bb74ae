// Translation of SQLite result codes into the project's storage error codes
// (messages/errc.hpp), carrying SQLite's own message as the error context; with the
// store's errors for a caller's mistake (store/store_errors.hpp), which every SQLite
// file reports too.
// Pure functions; safe from any thread (sqlite3_errmsg is per connection, so call
// them on the thread that owns the connection).
#pragma once

#include <string>

#include "caf/error.hpp"
#include "caf/make_message.hpp"

#include "messages/errc.hpp"
#include "store/store_errors.hpp"

struct sqlite3;

namespace mneme {

// The errc for a (primary or extended) SQLite result code:
//   SQLITE_FULL -> storage_disk_full, SQLITE_CORRUPT / SQLITE_NOTADB -> storage_corrupt,
//   SQLITE_BUSY / SQLITE_LOCKED -> storage_locked, SQLITE_READONLY / SQLITE_PERM /
//   SQLITE_AUTH -> storage_readonly, SQLITE_CANTOPEN -> storage_cant_open,
//   anything else -> storage_failed.
errc storage_errc(int sqlite_rc);

// caf::error for `rc` with context "<what>: <sqlite message> (code N)".
// `db` may be null (then the generic message of `rc` is used).
caf::error sqlite_failure(sqlite3* db, int rc, const std::string& what);

} // namespace mneme
