// The schema of the mneme database as an ordered list of migrations. Version N's
// SQL upgrades a file at version N-1 to N; PRAGMA user_version records the version.
// To change the schema, append an entry (never edit a released one): other modules
// (recall: FTS5 tables and their triggers) add their entries at the end.
// Thread: the writer connection's thread.
#pragma once

#include <vector>

#include "caf/error.hpp"
#include "caf/expected.hpp"

namespace mneme {

class db_connection;

struct migration {
  int version;          // 1, 2, 3, ... without gaps
  const char* purpose;  // one line, for logs
  const char* sql;      // DDL only, run as one script
};

// The version that added the compaction log (a reader of an older file finds none).
inline constexpr int compaction_log_schema_version = 9;

// The ordered list; versions are 1..N without gaps.
const std::vector<migration>& schema_migrations();

// The version this binary writes: the last entry's version.
int latest_schema_version();

// PRAGMA user_version of the open file (0 for a new, empty file).
caf::expected<int> schema_version(db_connection& db);

// Applies every migration above the file's version up to `target`, each in its own
// IMMEDIATE transaction together with the user_version bump, so a crash leaves the
// file at a whole version. Errors: storage_schema_too_new when the file's version is
// above latest_schema_version(); SQLite failures mapped by sqlite_failure().
// REQUIRES: db is a writer; 0 <= target <= latest_schema_version().
caf::error apply_migrations(db_connection& db, int target);

} // namespace mneme
