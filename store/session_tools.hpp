// The tools a session key offers its model (SPEC §8.1, issue 29): an agent turn that
// sends `tools` sets them for the key, later turns reuse them, and a session that was
// evicted or restarted reads them back when it rehydrates. Kept per session key, so a
// reset or a child session continues with the same tools.
//
// Table session_tools (migration 8): one row per setting, never updated nor deleted;
// the newest row of a key is the key's tools ("[]" after a turn cleared them). The
// session id that set them is kept for provenance.
//
// Functions over the writer connection; they never throw. Thread: the thread that owns
// `db` (the storage actor).
#pragma once

#include <cstdint>
#include <string>

#include "caf/expected.hpp"

#include "messages/transcript.hpp"

namespace mneme {

class db_connection;

// Largest tools JSON stored for one key (a schema list, not a transcript).
inline constexpr size_t session_tools_max_bytes = 1024 * 1024;

// Records `tools_json` as the tools of `session_key`, set by `session_id` at `now`.
// errc::bad_request for an empty key, a negative `now` or text over the limit.
caf::error put_session_tools(db_connection& db, const std::string& session_key,
                             const std::string& session_id, const std::string& tools_json,
                             time_ms now);

// What put_session_tools refuses (every backend): the errors listed above.
caf::error check_session_tools(const std::string& session_key, const std::string& tools_json,
                               time_ms now);

// The newest tools of `session_key`; "" when none were ever set.
caf::expected<std::string> session_tools_of(db_connection& db, const std::string& session_key);

} // namespace mneme
