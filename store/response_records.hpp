// The response records of the Responses door (issue 43, docs/api.md "Responses door"):
// each `response` the door answered in a session, with the session and the last row it
// answered, so that `previous_response_id` continues the chain — or branches from an
// older response of it — after a restart, after a failover to another node, and after
// its rows were compacted (they are archived, never lost).
//
// Table responses (SQLite migration 9, PostgreSQL schema v7): one row per response, its
// key, session, row and body never rewritten and the row never deleted; a DELETE of the
// API only sets deleted_at_ms (the id can no longer be continued or fetched; the
// session's rows stay). Each backend writes them (store/sqlite/sqlite_responses.hpp,
// store/pg/pg_responses.hpp) after the check below.
//
// The same table holds the door's conversation records (docs/api.md "Conversations
// API"): id "conv_…" (the session key of the conversation), session_id "" (the key's
// session is the conversation's), body the `conversation` object with its metadata: of
// this table only that body may be rewritten, while live (store/conversation_rewrite.hpp).
//
// Contracts (message_store):
//   put_response     inserts the record (a stored conv_ id: its body replaced, as checked
//                    by conversation_rewrite.hpp); bad_request as check_response_record;
//   response         the record (deleted ones too: the caller decides); errc::not_found;
//   delete_response  sets deleted_at_ms = now once; the record after it; errc::not_found
//                    for an unknown id or one deleted already.
// Pure; any thread.
#pragma once

#include <cstddef>

#include "caf/error.hpp"

#include "messages/storage_types.hpp"

namespace mneme {

// Largest response body stored (the answer's text and calls, as JSON).
inline constexpr size_t response_body_max_bytes = 16 * 1024 * 1024;

// errc::bad_request for an id starting with neither "resp_" nor "conv_", an empty
// session key, an empty session id (a response's), a negative row id or time, a set
// deleted_at_ms, or a body over response_body_max_bytes.
caf::error check_response_record(const response_record& r);

// Whether `id` names a conversation record ("conv_…") rather than a response.
bool is_conversation_record_id(const std::string& id);

} // namespace mneme
