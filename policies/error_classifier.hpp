// Classification of an HTTP answer from an OpenAI-compatible LLM endpoint into
// an llm_error_kind (SPEC §2 T6-T9, §3 summary failures), and the error
// trigger a kind fires. Pure functions, no allocation after the first call,
// safe from any thread; called by the LLM client for every non-2xx answer.
//
// Rules, first match wins (phrases match ASCII case-insensitively; Chinese
// phrases also match in their JSON \uXXXX-escaped form):
//   1. 2xx -> none. A status outside 100..599, or 1xx, -> malformed (no valid
//      final HTTP answer). 3xx -> bad_request (a misrouted base_url).
//   2. 413 -> payload_too_large (T6), whatever the body says.
//   3. 429: long-context phrases ("long context", "extra usage", ...) ->
//      long_context_rate_limit (T7); quota phrases ("insufficient_quota", ...)
//      -> quota; else rate_limited.
//   4. 401, 403 -> auth.   402 -> quota.
//   5. Any other status whose body carries quota phrases -> quota.
//   6. Other 4xx:
//      a. unsupported-parameter phrases ("unsupported parameter",
//         "unsupported_parameter", "unrecognized request argument", ...) ->
//         unsupported_parameter. Checked first: such an error is never an
//         overflow, even when it names max_tokens.
//      b. an output parameter (max_tokens, max_completion_tokens, "output
//         tokens", ...) together with a does-not-fit phrase ("too large",
//         "exceed", "at most", "range of", ...) -> output_too_large (T8).
//      c. overflow phrases ("context length", "maximum context", "prompt is
//         too long", "too many tokens", "context window", "超过最大长度",
//         "上下文长度", ...) -> context_overflow (T9).
//      d. else bad_request.
//   7. 5xx: overflow phrases (6c) -> context_overflow (T9); else server_error.
// Only the first max_classified_body_bytes of the body are examined: the
// phrases sit near the start, and a proxy's multi-megabyte error page must not
// cost more than a bounded scan.
#pragma once

#include <cstddef>
#include <string_view>

#include "messages/llm_error_kind.hpp"
#include "messages/trigger.hpp"

namespace mneme {

inline constexpr std::size_t max_classified_body_bytes = 64 * 1024;

llm_error_kind classify_http_answer(int status, std::string_view body);

// The error trigger a kind fires: error_trigger() in messages/trigger.hpp.

} // namespace mneme
