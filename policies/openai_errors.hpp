// The errors of the OpenAI door (issue 27 item 4, docs/api.md "OpenAI door"): a mneme
// error (its HTTP status and code from apps/common/api/http_status.hpp) as OpenAI
// answers it, so the official SDKs' retry logic behaves: they retry 408, 409, 429 and
// every 5xx, and never retry another 4xx. Pure, standard library only; any thread.
//
// Mapping (where mneme's own status would mislead an SDK):
//   - 409 of a refused tool loop (tool_results_pending, tool_round_cap) -> 400: the
//     request itself is wrong (OpenAI refuses a history with unanswered calls the same
//     way); a retry would fail again;
//   - 409 of a busy compaction (compaction_locked, compaction_in_flight) or of another
//     door request on the same session key (session_busy) -> 429: retry later;
//   - 409 compaction_exhausted -> 503: the session was reset; a retry runs in the new one;
//   - 413 context_unfittable and the upstream's context overflow -> 400 with code
//     context_length_exceeded (OpenAI's own), never retried;
//   - the upstream's rate limits (llm_rate_limited, llm_long_context_rate_limit) -> 429;
//   - everything else keeps its status.
// The type follows the status: 400/413 invalid_request_error, 401 authentication_error,
// 403 permission_error, 404 not_found_error, 405 invalid_request_error, 429
// rate_limit_error, 5xx api_error.
#pragma once

#include <string>
#include <string_view>

namespace mneme {

struct openai_error_kind {
  int status = 500;
  std::string type;
  std::string code;
};

// `status` and `code` as mneme's API answers them.
openai_error_kind openai_error_of(int status, std::string_view code);

// Whether an OpenAI SDK retries an answer of this status.
bool sdk_retries(int status);

} // namespace mneme
