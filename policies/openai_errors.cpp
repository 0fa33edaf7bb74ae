// The OpenAI door's error mapping; see openai_errors.hpp.
#include "policies/openai_errors.hpp"

namespace mneme {

namespace {

std::string openai_type_of(int status) {
  switch (status) {
    case 400:
    case 405:
    case 413: return "invalid_request_error";
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 429: return "rate_limit_error";
    default: return status >= 500 ? "api_error" : "invalid_request_error";
  }
}

} // namespace

openai_error_kind openai_error_of(int status, std::string_view code) {
  openai_error_kind out{status, {}, std::string{code}};
  if (code == "tool_results_pending" || code == "tool_round_cap")
    out.status = 400;
  else if (code == "compaction_locked" || code == "compaction_in_flight"
           || code == "session_busy")
    out.status = 429;
  else if (code == "compaction_exhausted")
    out.status = 503;
  else if (code == "context_unfittable" || code == "llm_context_overflow") {
    out.status = 400;
    out.code = "context_length_exceeded";
  } else if (code == "llm_rate_limited" || code == "llm_long_context_rate_limit")
    out.status = 429;
  out.type = openai_type_of(out.status);
  return out;
}

bool sdk_retries(int status) {
  return status == 408 || status == 409 || status == 429 || status >= 500;
}

} // namespace mneme
