// The one rewrite the response records allow (store/response_records.hpp): a live
// conversation record's body, i.e. its `conversation` object with new metadata
// (POST /v1/conversations/{id}, docs/api.md "Conversations API"; OpenAI replaces the
// metadata object). Every other field stays as stored, a deleted record stays as it was,
// and a response ("resp_…") is never rewritten: the never-rewritten triggers (SQLite
// schema v13, PostgreSQL v11) let exactly this through. Each backend's put_response
// checks a put of a stored conversation id with it, then updates only the body.
// Header-only and pure; any thread.
#pragma once

#include "caf/error.hpp"

#include "messages/errc.hpp"
#include "messages/storage_types.hpp"
#include "store/response_records.hpp"
#include "store/store_errors.hpp"

namespace mneme {

// Whether `next` may replace `stored`: errc::not_found when `stored` is deleted,
// errc::bad_request when any field but the body differs (or the id names a response).
// REQUIRES: next.id == stored.id.
inline caf::error check_conversation_rewrite(const response_record& stored,
                                             const response_record& next) {
  if (!is_conversation_record_id(stored.id))
    return bad_request("response '" + stored.id + "' is stored already; responses are never "
                       "rewritten");
  if (stored.deleted_at_ms != 0)
    return not_found("conversation '" + stored.id + "' (deleted)");
  if (next.user_id != stored.user_id || next.session_key != stored.session_key
      || next.session_id != stored.session_id || next.last_row_id != stored.last_row_id
      || next.previous_id != stored.previous_id || next.created_at_ms != stored.created_at_ms)
    return bad_request("conversation '" + stored.id
                       + "': only its body (the metadata) may change; its user, key, session "
                         "and times stay as stored");
  return {};
}

} // namespace mneme
