// The checks every store backend makes before it writes a session (sqlite_store.cpp,
// store/pg/pg_store*.cpp): label sizes, a new session's id and defaults, a reset's
// arguments. Pure functions of values; errors are errc::bad_request.
// Thread: the store's owner.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include "caf/error.hpp"
#include "messages/storage_types.hpp"
#include "store/session_ids.hpp"
#include "store/store_errors.hpp"

namespace mneme {

inline constexpr std::size_t max_label_bytes = 512; // user id, model, reasons
// A stored session key may be longer: a user (max_label_bytes), U+001F and the key a
// client names (policies/client_text.hpp session_key_max_bytes = 1024, the limit the HTTP
// API checks and docs/api.md states): policies/key_namespace.hpp.
inline constexpr std::size_t max_session_key_bytes = max_label_bytes + 1 + 1024;

inline caf::error check_label(const std::string& value, const char* name,
                              std::size_t max_bytes = max_label_bytes) {
  if (value.size() > max_bytes)
    return bad_request(std::string{name} + " exceeds " + std::to_string(max_bytes) + " bytes");
  return {};
}

// Makes `rec` the session create_session inserts: a generated id when it has none
// (else a valid one), started at `now` unless it says when, not ended, triggers at
// zero. Errors: now < 0, an invalid id, an oversized label.
inline caf::error prepare_new_session(session_record& rec, time_ms now,
                                      session_id_generator& ids) {
  if (now < 0)
    return bad_request("create session: now must be >= 0");
  if (rec.id.empty())
    rec.id = ids.next(now);
  else if (!valid_session_id(rec.id))
    return bad_request("create session: id must be 1..128 characters of [A-Za-z0-9._:-]");
  for (auto [value, name] : {std::pair{&rec.user_id, "user_id"}, std::pair{&rec.model, "model"}})
    if (auto err = check_label(*value, name))
      return err;
  if (auto err = check_label(rec.session_key, "session_key", max_session_key_bytes))
    return err;
  if (rec.started_at_ms <= 0)
    rec.started_at_ms = now;
  rec.ended_at_ms = 0;
  rec.end_reason.clear();
  rec.triggers = trigger_state{};
  return {};
}

// The arguments of reset_session (SPEC §5.3).
inline caf::error check_reset_request(int head_count, time_ms now, int64_t max_row_tokens) {
  if (head_count < 0 || head_count > 1000)
    return bad_request("reset: head_count must be 0..1000");
  if (max_row_tokens < 0)
    return bad_request("reset: max_row_tokens must be >= 0");
  if (now < 0)
    return bad_request("reset: now must be >= 0");
  return {};
}

} // namespace mneme
