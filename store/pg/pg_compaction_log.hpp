// The compaction log on PostgreSQL (store/compaction_log.hpp states what it is): the
// statements over a transaction the caller owns. Failures throw (libpqxx), as every
// statement of store/pg does; the caller's guarded() or session skeleton maps them.
// Thread: the connection's owner (the storage actor).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <pqxx/transaction_base>

#include "messages/storage_types.hpp"

namespace mneme::pg {

// Inserts `e` (its id ignored, checked by the caller) inside `t`; the new row's id.
int64_t insert_compaction_log(pqxx::transaction_base& t, const compaction_log_entry& e);

// The newest `limit` rows of `session_id`, oldest first.
std::vector<compaction_log_entry> compaction_log_of(pqxx::transaction_base& t,
                                                   const std::string& session_id,
                                                   int64_t limit);

} // namespace mneme::pg
