// The Idempotency-Key header of a write (docs/api.md "Idempotency-Key"; policies/
// idempotency.hpp): read and checked once per request by the routes that honour it
// (appends, turns, the doors), and the answer header of a replay.
// Threads: in the request's actor.
#pragma once

#include <optional>
#include <string>

#include "apps/common/api/front/http_exchange.hpp"
#include "apps/common/api/json_codec.hpp"
#include "apps/common/api/plumbing/call.hpp"

namespace mneme::api {

// The request's Idempotency-Key: "" when it sent none; nullopt when the header is not
// usable (sent twice, empty, too long, not printable ASCII): `refused` then holds the
// 400's message naming the header (a door answers it in its own shape).
std::optional<std::string> idempotency_key_in(const http_request& req, std::string& refused);

// The same, the refusal answered 400 bad_request in mneme's shape.
std::optional<std::string> idempotency_key_of(const call_ptr& c);

// Adds "Idempotent-Replayed: true" to `res`.
void mark_replayed(http_response& res);

// send_json for an answer that may be a replay of an earlier request's.
void send_json_replayable(const call_ptr& c, int status, const json& body, bool replayed);

} // namespace mneme::api
