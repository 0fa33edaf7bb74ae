// JSONL import on PostgreSQL (issue 26, stage 3): the semantics of
// store/jsonl_import.hpp (the same plan: every line checked and the target resolved
// before anything is written; ids renumbered in order; provenance, archived_by and
// the live order rebuilt), run as one transaction on the store's connection, so a
// bad line or a failure part-way imports nothing.
// Only for pg_store (store/pg/pg_store.cpp). Thread: the connection's owner.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include <pqxx/connection>
#include <pqxx/transaction_base>

#include "caf/expected.hpp"

#include "messages/transcript.hpp"
#include "store/store_params.hpp"

namespace mneme {

// `fence` (node mode, pg_store::fence_key) runs first inside the transaction with
// the target's session key: its token is stamped on every imported row, its error
// refuses the import.
using pg_key_fence =
  std::function<caf::expected<int64_t>(pqxx::transaction_base&, const std::string&)>;

caf::expected<session_record> pg_import_jsonl(pqxx::connection& conn, std::string_view jsonl,
                                              session_record into, time_ms now,
                                              const store_params& params,
                                              const pg_key_fence& fence);

} // namespace mneme
