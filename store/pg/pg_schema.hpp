// The PostgreSQL schema of the mneme database (issue 26) and its migrations. The
// layout mirrors the SQLite one (store/sqlite/migrations.cpp): immutable `messages` rows,
// the narrow `message_state` table that compaction, rollback and reset update, the
// sessions with their trigger state, checkpoints. Free text is stored as bytea:
// mneme stores message bytes as given (NUL and invalid UTF-8 included), which a
// PostgreSQL text column cannot hold. Ids are text (valid_session_id restricts them
// to ASCII). Recall reads search_words / search_text (store/pg/pg_search_columns.hpp).
// Versions live in the table mneme_schema_versions (one row per applied version);
// migrations run under a transaction-scoped advisory lock, so several nodes
// starting at once apply each version exactly once.
// Thread: the caller's (the connection's owner).
#pragma once

#include <string>
#include <vector>

#include "caf/error.hpp"
#include "caf/expected.hpp"

#include <pqxx/connection>
#include <pqxx/transaction_base>

namespace mneme {

struct pg_migration {
  int version;
  const char* description;
  const char* sql;
  // Runs after `sql` in the same transaction (columns computed in C++ for the rows
  // already stored), or null.
  void (*backfill)(pqxx::transaction_base&) = nullptr;
};

const std::vector<pg_migration>& pg_schema_migrations();
int pg_latest_schema_version();

// The highest applied version (0 for an empty database).
caf::expected<int> pg_schema_version(pqxx::connection& conn);

// Applies every missing version up to `target` (the latest; a test writes a database
// of an older version with a lower one), each in its own transaction.
// REQUIRES: 0 <= target <= pg_latest_schema_version(). Errors: storage_schema_too_new when the database is newer than this binary;
// storage_failed with PostgreSQL's message otherwise.
caf::error pg_apply_migrations(pqxx::connection& conn, int target = pg_latest_schema_version());

} // namespace mneme
