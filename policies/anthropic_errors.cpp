// The Anthropic door's error mapping; see anthropic_errors.hpp.
#include "policies/anthropic_errors.hpp"

#include <algorithm>
#include <initializer_list>

namespace mneme {

namespace {

bool anthropic_code_in(std::string_view code, std::initializer_list<std::string_view> codes) {
  return std::find(codes.begin(), codes.end(), code) != codes.end();
}

int anthropic_status_of(int status, std::string_view code) {
  if (anthropic_code_in(code, {"tool_results_pending", "tool_round_cap", "nothing_to_compact",
                               "context_unfittable", "llm_context_overflow", "llm_bad_request",
                               "llm_unsupported_parameter", "llm_payload_too_large",
                               "llm_output_too_large"}))
    return 400;
  if (anthropic_code_in(code, {"compaction_locked", "compaction_in_flight", "session_busy", "llm_rate_limited",
                               "llm_long_context_rate_limit", "llm_quota"}))
    return 429;
  if (anthropic_code_in(code, {"llm_server_error", "llm_network", "llm_refused", "llm_dns",
                               "llm_tls", "overloaded", "shutting_down", "lease_elsewhere",
                               "lease_lost"}))
    return 529;
  if (code == "compaction_exhausted") // the session was reset: a retry runs in the new one
    return 500;
  if (code == "idempotency_in_flight" || code == "idempotency_unanswered")
    return 409; // the in-flight one is retried by the SDKs, as Anthropic's own 409
  if (code == "idempotency_key_reused")
    return 422;
  switch (status) {
    case 400:
    case 401:
    case 403:
    case 404:
    case 413:
    case 429:
    case 529: return status;
    default: return status >= 500 ? 500 : 400;
  }
}

std::string anthropic_type_of(int status) {
  switch (status) {
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 413: return "request_too_large";
    case 429: return "rate_limit_error";
    case 500: return "api_error";
    case 529: return "overloaded_error";
    default: return "invalid_request_error";
  }
}

} // namespace

anthropic_error_kind anthropic_error_of(int status, std::string_view code) {
  anthropic_error_kind out;
  out.status = anthropic_status_of(status, code);
  out.type = anthropic_type_of(out.status);
  out.prompt_too_long = code == "context_unfittable" || code == "llm_context_overflow";
  return out;
}

std::string anthropic_stop_reason(std::string_view finish_reason,
                                  std::string_view stop_sequence) {
  if (finish_reason == "tool_calls")
    return "tool_use";
  if (finish_reason == "length")
    return "max_tokens";
  if (finish_reason == "stop" && !stop_sequence.empty())
    return "stop_sequence";
  return "end_turn";
}

} // namespace mneme
