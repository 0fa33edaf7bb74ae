// Import of a session from its JSONL export on SQLite (store/jsonl_import.hpp states the
// mapping and the refusals): the plan of plan_session_import written in one IMMEDIATE
// transaction. Thread: the owner of the writer connection (the storage actor's thread).
#pragma once

#include <string_view>

#include "caf/expected.hpp"

#include "messages/transcript.hpp"
#include "store/jsonl_import.hpp"
#include "store/store_params.hpp"

namespace mneme {

class db_connection;

// The whole import in one transaction; the new session's record. REQUIRES: db is the
// writer.
caf::expected<session_record> import_session_jsonl(db_connection& db, std::string_view jsonl,
                                                   session_record into, time_ms now,
                                                   const store_params& params);

} // namespace mneme
