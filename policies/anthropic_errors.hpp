// The errors of the Anthropic Messages door (issue 44, docs/api.md "Anthropic door"): a
// mneme error (its HTTP status and code from apps/common/api/http_status.hpp) as
// Anthropic answers it, so the official SDKs' retries behave: they retry 408, 409, 429
// and every 5xx (529 overloaded_error among them), never another 4xx. Pure, standard
// library only; any thread.
//
// Mapping (where mneme's own status would mislead an SDK or an agent):
//   - a refused tool loop (tool_results_pending, tool_round_cap) and nothing_to_compact
//     -> 400: the request itself is wrong, a retry fails again;
//   - a busy compaction (compaction_locked, compaction_in_flight), another door request on
//     the same session key (session_busy) and the upstream's rate
//     limits (llm_rate_limited, llm_long_context_rate_limit, llm_quota) -> 429;
//   - the upstream unreachable or failing (llm_server_error, llm_network, llm_refused,
//     llm_dns, llm_tls), mneme's own pending-request bound (overloaded), a daemon
//     shutting down or a lease elsewhere -> 529 overloaded_error: retry later;
//   - context_unfittable and the upstream's context overflow -> 400, its message
//     starting "prompt is too long" (as Anthropic's, which agents watch for to compact);
//   - the upstream refusing the request (llm_bad_request, llm_unsupported_parameter,
//     llm_payload_too_large, llm_output_too_large) -> 400;
//   - compaction_exhausted (409) -> 500: the session was reset, a retry runs in the new one;
//   - the Idempotency-Key's refusals keep their statuses: idempotency_in_flight and
//     idempotency_unanswered 409, idempotency_key_reused 422 (invalid_request_error);
//   - everything else of 5xx (timeouts, storage, a malformed upstream answer, the
//     upstream's credentials: the daemon's, not the client's) -> 500 api_error.
// The type follows the status: 400 (and any other 4xx) invalid_request_error, 401
// authentication_error, 403 permission_error, 404 not_found_error, 413
// request_too_large, 429 rate_limit_error, 500 api_error, 529 overloaded_error.
#pragma once

#include <string>
#include <string_view>

namespace mneme {

struct anthropic_error_kind {
  int status = 500;
  std::string type;
  bool prompt_too_long = false; // the message starts "prompt is too long: "
};

// `status` and `code` as mneme's API answers them.
anthropic_error_kind anthropic_error_of(int status, std::string_view code);

// The stop_reason of an answer from the upstream's finish_reason and the stop sequence
// that ended it (chat_answer::stop_sequence, "" = none): tool_calls -> tool_use, length
// -> max_tokens, stop with a stop sequence -> stop_sequence, anything else -> end_turn.
// (An OpenAI-compatible upstream that does not name the matched sequence, as vLLM does in
// its stop_reason, gives "": its stop sequences end in end_turn.)
std::string anthropic_stop_reason(std::string_view finish_reason,
                                  std::string_view stop_sequence = {});

} // namespace mneme
