// Tests of the OpenAI door's error mapping (policies/openai_errors.hpp): mneme's statuses
// and codes in OpenAI's types and statuses, keeping what an SDK retries retriable and
// the rest not.
#include <boost/test/unit_test.hpp>

#include "policies/openai_errors.hpp"

BOOST_AUTO_TEST_SUITE(openai_errors_test)

using namespace mneme;

BOOST_AUTO_TEST_CASE(errors_keep_retriable_statuses_retriable_and_the_rest_not) {
  BOOST_TEST(openai_error_of(400, "bad_request").type == "invalid_request_error");
  BOOST_TEST(!sdk_retries(openai_error_of(400, "bad_request").status));
  BOOST_TEST(openai_error_of(409, "tool_results_pending").status == 400);
  BOOST_TEST(openai_error_of(409, "compaction_locked").status == 429);
  BOOST_TEST(openai_error_of(409, "session_busy").status == 429);
  BOOST_TEST(openai_error_of(409, "session_busy").code == "session_busy");
  BOOST_TEST(openai_error_of(409, "compaction_exhausted").status == 503);
  auto overflow = openai_error_of(413, "context_unfittable");
  BOOST_TEST(overflow.status == 400);
  BOOST_TEST(overflow.code == "context_length_exceeded");
  BOOST_TEST(openai_error_of(503, "llm_rate_limited").status == 429);
  BOOST_TEST(openai_error_of(429, "overloaded").type == "rate_limit_error");
  BOOST_TEST(openai_error_of(502, "llm_server_error").type == "api_error");
  BOOST_TEST(sdk_retries(openai_error_of(502, "llm_server_error").status));
  BOOST_TEST(openai_error_of(401, "unauthorized").type == "authentication_error");
}

BOOST_AUTO_TEST_SUITE_END() // openai_errors_test
