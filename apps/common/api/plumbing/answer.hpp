// How a route answers (docs/api.md "Status codes and error codes"): JSON bodies, every
// error as {"error":{"code","message"}} with the status of http_status.hpp. A route ends
// by calling send_json, send_error or fail exactly once on every path (or finish() with
// another body, or a stream).
//
// fail() is the answer of a failed ask or decode: a key served by another node is
// forwarded there (node mode), a request failing while the daemon shuts down is 503
// shutting_down (unless the error is the client's: 400, 404), a 5xx is logged at warn,
// and an exhausted turn's error carries the turn's reply fields (the new session, the
// notice, the compactions it tried).
//
// Threads: in the request's actor (or on the blocking thread for a blocking route).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "caf/error.hpp"

#include "apps/common/api/front/http_exchange.hpp"
#include "apps/common/api/json_codec.hpp"
#include "apps/common/api/plumbing/call.hpp"

namespace mneme::api {

http_response json_response(int status, const json& body);
// mneme's own error answer: {"error":{"code","message"}}.
http_response error_response(int status, const std::string& code, const std::string& message);

void send_json(const call_ptr& c, int status, const json& body);
void send_error(const call_ptr& c, int status, const std::string& code, const std::string& msg);

// The status and JSON body of a failed ask (or decode); see above.
std::pair<int, json> error_answer(const call_ptr& c, const caf::error& err);
void fail(const call_ptr& c, const caf::error& err);

// docs/api.md "Retry-After": adds `Retry-After: <upstream_wait>` to the headers of an
// error answer of `client_status` when the upstream asked for that wait (the error's
// upstream_retry_after_of, messages/llm_errc.hpp) and clients retry that status
// (policies/retry_after.hpp passes_retry_after). Without it, the front adds its own "1"
// to a 429, 503 or 529 (front/http_front.hpp default_retry_after).
void add_upstream_retry_after(header_list& headers, std::optional<int64_t> upstream_wait,
                              int client_status);

} // namespace mneme::api
