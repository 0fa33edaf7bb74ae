// Classification of a failure answered by an upstream that speaks Anthropic's Messages
// API (model.api: anthropic) into an llm_error_kind, so retries, backoff, the error
// triggers and failure protection treat it exactly as the same failure from an
// OpenAI-compatible upstream. Pure, standard library only; any thread. Called by the
// LLM client (actors/llm) for every non-2xx answer and every `error` event of a stream;
// the client extracts `error.type` and `error.message` from the body
// ({"type":"error","error":{"type":...,"message":...}}).
//
// Rules, first match wins (`type` is Anthropic's error type; `status` 0 = an error
// event in the middle of a 200 stream, which has no status of its own):
//   1. overloaded_error (529), api_error (500), timeout_error -> server_error: the
//      upstream is failing, retry after a backoff; the circuit counts it.
//   2. rate_limit_error, or status 429 -> classify_http_answer(429, message): a
//      long-context refusal -> long_context_rate_limit (T7), a quota phrase -> quota,
//      else rate_limited.
//   3. authentication_error, permission_error, or status 401/403 -> auth (the abort).
//   4. billing_error, or status 402 -> quota.
//   5. request_too_large, or status 413 -> payload_too_large (T6).
//   6. not_found_error, or status 404 -> bad_request (an unknown model or a wrong
//      base_url; never retried).
//   7. invalid_request_error, or any other 4xx -> classify_http_answer(400 or the
//      status, message): "prompt is too long: N tokens > M maximum" -> context_overflow
//      (T9); "max_tokens: ... maximum allowed" and "input length and `max_tokens`
//      exceed context limit" -> output_too_large (T8); unsupported parameters ->
//      unsupported_parameter; else bad_request.
//   8. Anything else: with a status, classify_http_answer(status, message); without one
//      (an unknown error event) -> server_error.
// Invariant: never none, for any input (an error answer is always a failure).
#pragma once

#include <string_view>

#include "messages/llm_error_kind.hpp"

namespace mneme {

llm_error_kind classify_messages_api_error(int status, std::string_view type,
                                           std::string_view message);

} // namespace mneme
