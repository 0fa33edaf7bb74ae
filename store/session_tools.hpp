// The tools a session key offers its model (SPEC §8.1, issue 29): an agent turn that
// sends `tools` sets them for the key, later turns reuse them, and a session that was
// evicted or restarted reads them back when it rehydrates. Kept per session key, so a
// reset or a child session continues with the same tools.
//
// Table session_tools (SQLite migration 8, PostgreSQL schema v2): one row per setting,
// never updated nor deleted; the newest row of a key is the key's tools ("[]" after a
// turn cleared them). The session id that set them is kept for provenance. Each backend
// writes them (store/sqlite/sqlite_session_tools.hpp, store/pg/pg_store.cpp) after the
// check below. Pure; any thread.
#pragma once

#include <cstddef>
#include <string>

#include "caf/error.hpp"

#include "messages/transcript.hpp"

namespace mneme {

// Largest tools JSON stored for one key (a schema list, not a transcript).
inline constexpr size_t session_tools_max_bytes = 1024 * 1024;

// What a put of session tools refuses on every backend: errc::bad_request for an empty
// key, a negative `now` or text over session_tools_max_bytes.
caf::error check_session_tools(const std::string& session_key, const std::string& tools_json,
                               time_ms now);

} // namespace mneme
