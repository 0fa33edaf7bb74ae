// The compaction log on SQLite (store/compaction_log.hpp states what it is): functions
// over the writer connection; they never throw. The caller checked the entry
// (check_compaction_log) and owns the transaction.
// Thread: the thread that owns `db` (the storage actor).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "caf/expected.hpp"

#include "messages/storage_types.hpp"

namespace mneme {

class db_connection;

// Inserts `e` (its id ignored) inside the caller's transaction; the new row's id.
caf::expected<int64_t> insert_compaction_log(db_connection& db, const compaction_log_entry& e);

// The newest `limit` rows of `session_id`, oldest first.
caf::expected<std::vector<compaction_log_entry>>
compaction_log_of(db_connection& db, const std::string& session_id, int64_t limit);

} // namespace mneme
