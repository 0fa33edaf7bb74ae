// Table tests of the Anthropic door's error mapping and stop reasons
// (policies/anthropic_errors.hpp): mneme's statuses and codes as Anthropic's statuses and
// types, what an SDK retries (429, 5xx, 529) kept retriable and the rest not.
#include <boost/test/unit_test.hpp>

#include <string>

#include "policies/anthropic_errors.hpp"

BOOST_AUTO_TEST_SUITE(anthropic_errors_test)

using namespace mneme;

namespace {

struct anthropic_error_row {
  int status;
  const char* code;
  int want_status;
  const char* want_type;
  bool want_prompt_too_long;
};

const anthropic_error_row anthropic_error_rows[] = {
  {400, "bad_request", 400, "invalid_request_error", false},
  {401, "unauthorized", 401, "authentication_error", false},
  {403, "forbidden", 403, "permission_error", false},
  {404, "not_found", 404, "not_found_error", false},
  {405, "method_not_allowed", 400, "invalid_request_error", false},
  {413, "body_too_large", 413, "request_too_large", false},
  {409, "tool_results_pending", 400, "invalid_request_error", false},
  {409, "tool_round_cap", 400, "invalid_request_error", false},
  {409, "nothing_to_compact", 400, "invalid_request_error", false},
  {409, "compaction_locked", 429, "rate_limit_error", false},
  {409, "compaction_in_flight", 429, "rate_limit_error", false},
  {409, "session_busy", 429, "rate_limit_error", false},
  {409, "compaction_exhausted", 500, "api_error", false},
  {409, "idempotency_in_flight", 409, "invalid_request_error", false},
  {409, "idempotency_unanswered", 409, "invalid_request_error", false},
  {422, "idempotency_key_reused", 422, "invalid_request_error", false},
  {413, "context_unfittable", 400, "invalid_request_error", true},
  {502, "llm_context_overflow", 400, "invalid_request_error", true},
  {502, "llm_bad_request", 400, "invalid_request_error", false},
  {502, "llm_unsupported_parameter", 400, "invalid_request_error", false},
  {503, "llm_rate_limited", 429, "rate_limit_error", false},
  {503, "llm_long_context_rate_limit", 429, "rate_limit_error", false},
  {503, "llm_quota", 429, "rate_limit_error", false},
  {502, "llm_server_error", 529, "overloaded_error", false},
  {502, "llm_network", 529, "overloaded_error", false},
  {429, "overloaded", 529, "overloaded_error", false},
  {503, "shutting_down", 529, "overloaded_error", false},
  {502, "llm_auth", 500, "api_error", false},
  {502, "llm_malformed", 500, "api_error", false},
  {504, "llm_total_timeout", 500, "api_error", false},
  {504, "request_timeout", 500, "api_error", false},
  {500, "storage_failed", 500, "api_error", false},
  {500, "internal", 500, "api_error", false},
};

bool anthropic_sdk_retries(int status) {
  return status == 408 || status == 409 || status == 429 || status >= 500;
}

} // namespace

BOOST_AUTO_TEST_CASE(every_mneme_error_has_anthropics_status_and_type) {
  for (const auto& row : anthropic_error_rows) {
    BOOST_TEST_CONTEXT(row.status << " " << row.code) {
      auto kind = anthropic_error_of(row.status, row.code);
      BOOST_TEST(kind.status == row.want_status);
      BOOST_TEST(kind.type == row.want_type);
      BOOST_TEST(kind.prompt_too_long == row.want_prompt_too_long);
    }
  }
}

BOOST_AUTO_TEST_CASE(an_sdk_retries_only_what_a_retry_can_cure) {
  BOOST_TEST(!anthropic_sdk_retries(anthropic_error_of(409, "tool_results_pending").status));
  BOOST_TEST(!anthropic_sdk_retries(anthropic_error_of(413, "context_unfittable").status));
  BOOST_TEST(anthropic_sdk_retries(anthropic_error_of(409, "compaction_locked").status));
  BOOST_TEST(anthropic_sdk_retries(anthropic_error_of(502, "llm_server_error").status));
}

BOOST_AUTO_TEST_CASE(stop_reasons_follow_the_upstreams_finish_reason) {
  BOOST_TEST(anthropic_stop_reason("tool_calls") == "tool_use");
  BOOST_TEST(anthropic_stop_reason("length") == "max_tokens");
  BOOST_TEST(anthropic_stop_reason("stop") == "end_turn");
  BOOST_TEST(anthropic_stop_reason("") == "end_turn");
  BOOST_TEST(anthropic_stop_reason("content_filter") == "end_turn");
}

BOOST_AUTO_TEST_CASE(a_matched_stop_sequence_is_the_stop_sequence_stop_reason) {
  BOOST_TEST(anthropic_stop_reason("stop", "END") == "stop_sequence");
  // Only an answer that stopped says so: a tool call or a cut answer keeps its reason.
  BOOST_TEST(anthropic_stop_reason("tool_calls", "END") == "tool_use");
  BOOST_TEST(anthropic_stop_reason("length", "END") == "max_tokens");
  BOOST_TEST(anthropic_stop_reason("stop", "") == "end_turn");
}

BOOST_AUTO_TEST_SUITE_END() // anthropic_errors_test
