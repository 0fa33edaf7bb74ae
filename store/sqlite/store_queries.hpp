// The read operations of the store, over any connection (the writer's or a
// read-only reader's). Each returns a value or an errc: not_found for an unknown
// session/checkpoint, bad_request for invalid arguments, storage_* for SQLite
// failures. Thread: the thread that owns `db`.
#pragma once

#include <string>
#include <vector>

#include "caf/expected.hpp"

#include "messages/storage_types.hpp"
#include "messages/transcript.hpp"

namespace mneme {

class db_connection;

// The session row with its trigger state.
caf::expected<session_record> load_session(db_connection& db, const std::string& session_id);

// Sessions matching `filter`, newest first (started_at_ms, then id, descending).
caf::expected<std::vector<session_record>> list_sessions(db_connection& db,
                                                         const session_filter& filter);

// Row counts by state (SPEC §1 table) and sizes.
caf::expected<session_stats> load_session_stats(db_connection& db,
                                                const std::string& session_id);

// The persisted trigger state (SPEC §5), field by field.
caf::expected<trigger_state> load_triggers(db_connection& db, const std::string& session_id);

// The live context: active rows in position order (head, summary, tail); a
// summary sits where the first row it archived was.
caf::expected<std::vector<message>> load_live_context(db_connection& db,
                                                      const std::string& session_id);

// The first `limit` rows of the session with first_id <= id <= last_id, any state, in id
// order. REQUIRES (else bad_request): 0 < first_id <= last_id, limit >= 1.
caf::expected<std::vector<message>> load_range(db_connection& db, const std::string& session_id,
                                               int64_t first_id, int64_t last_id, int64_t limit);

// message_store::idempotent_rows over `db`.
caf::expected<std::vector<message>> load_idempotent_rows(db_connection& db,
                                                         const std::string& session_key,
                                                         const std::string& idempotency_key,
                                                         time_ms since_ms, int64_t limit);

// Checkpoints of a session, oldest first.
caf::expected<std::vector<checkpoint_record>> list_checkpoints(db_connection& db,
                                                               const std::string& session_id);

// Fails with not_found unless the session exists.
caf::error require_session(db_connection& db, const std::string& session_id);

} // namespace mneme
