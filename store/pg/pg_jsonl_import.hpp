// JSONL import on PostgreSQL (issue 26, stage 3): the semantics of
// store/jsonl_import.hpp (the same plan: every line checked and the target resolved
// before anything is written; ids renumbered in order; provenance, archived_by and
// the live order rebuilt), run as one transaction on the store's connection, so a
// bad line or a failure part-way imports nothing.
// Only for pg_store (store/pg/pg_store.cpp). Thread: the connection's owner.
#pragma once

#include <string_view>

#include <pqxx/connection>

#include "caf/expected.hpp"

#include "messages/transcript.hpp"
#include "store/store_params.hpp"

namespace mneme {

caf::expected<session_record> pg_import_jsonl(pqxx::connection& conn, std::string_view jsonl,
                                              session_record into, time_ms now,
                                              const store_params& params);

} // namespace mneme
