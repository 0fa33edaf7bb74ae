// The tools of agent turns per session key on SQLite (store/session_tools.hpp states
// what they are): functions over the writer connection; they never throw.
// Thread: the thread that owns `db` (the storage actor).
#pragma once

#include <string>

#include "caf/error.hpp"
#include "caf/expected.hpp"

#include "messages/transcript.hpp"
#include "store/session_tools.hpp"

namespace mneme {

class db_connection;

// Records `tools_json` as the tools of `session_key`, set by `session_id` at `now`, in a
// transaction of its own. Refusals: check_session_tools.
caf::error put_session_tools(db_connection& db, const std::string& session_key,
                             const std::string& session_id, const std::string& tools_json,
                             time_ms now);

// The newest tools of `session_key`; "" when none were ever set.
caf::expected<std::string> session_tools_of(db_connection& db, const std::string& session_key);

} // namespace mneme
