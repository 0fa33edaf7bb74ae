// The writes of the sessions table that several SQLite operations share
// (store/sqlite/sqlite_store*.cpp, store/sqlite/sqlite_jsonl_import.cpp): the one
// INSERT of a session, its trigger state and its end. Each runs inside the caller's
// transaction. Thread: the owner of the writer connection.
#pragma once

#include <string>

#include "caf/error.hpp"
#include "caf/expected.hpp"

#include "messages/transcript.hpp"

namespace mneme {

class db_connection;

// Inserts the sessions row of `rec`: id, user, key, parent, model, started, ended and
// end reason (its trigger state starts at zero). False when a session with that id
// exists. `what` names the step in a storage error.
caf::expected<bool> insert_session(db_connection& db, const session_record& rec,
                                   const std::string& what);

// Persists `t` field by field. bad_request: cooldown_reason over the label limit;
// not_found: no such session.
caf::error write_triggers(db_connection& db, const std::string& session_id,
                          const trigger_state& t);

// Marks the session ended at `now` (at least 1 ms) for `reason`.
caf::error write_session_end(db_connection& db, const std::string& session_id, time_ms now,
                             const std::string& reason, const std::string& what);

} // namespace mneme
