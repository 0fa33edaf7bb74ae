// Tests of the Messages API error classification (policies/messages_api_errors.hpp):
// every status and error type Anthropic answers, written from the shapes its API sends,
// lands on the same llm_error_kind as the same failure from an OpenAI-compatible
// upstream, so retries, backoff, triggers and the auth abort behave alike; an error
// event mid-stream (no status) is classified by its type alone.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <ostream>
#include <string>
#include <vector>

#include "policies/messages_api_errors.hpp"
#include "tests/print_vocabulary.hpp"

BOOST_AUTO_TEST_SUITE(messages_api_errors_test)

namespace data = boost::unit_test::data;
using namespace mneme;
using kind = llm_error_kind;

namespace {

struct anthropic_failure {
  int status;
  std::string type;
  std::string message;
  kind want;
};

std::ostream& operator<<(std::ostream& os, const anthropic_failure& f) {
  return os << "HTTP " << f.status << " " << f.type << ": " << f.message;
}

} // namespace

BOOST_DATA_TEST_CASE(
    every_anthropic_status_and_type_maps_onto_the_fault_class_of_its_openai_twin,
    data::make(std::vector<anthropic_failure>{
      {529, "overloaded_error", "Overloaded", kind::server_error},
      {500, "api_error", "Internal server error", kind::server_error},
      {504, "timeout_error", "Request timed out", kind::server_error},
      {503, "", "upstream connect error", kind::server_error},
      {429, "rate_limit_error",
       "Number of request tokens has exceeded your per-minute rate limit", kind::rate_limited},
      {429, "rate_limit_error",
       "Extra usage is required for long context requests.", kind::long_context_rate_limit},
      {429, "", "Too many requests", kind::rate_limited},
      {401, "authentication_error", "invalid x-api-key", kind::auth},
      {403, "permission_error", "Your API key does not have permission to use the specified "
                                "resource.", kind::auth},
      {400, "billing_error", "Your credit balance is too low to access the Anthropic API.",
       kind::quota},
      {413, "request_too_large", "Request exceeds the maximum allowed number of bytes.",
       kind::payload_too_large},
      {404, "not_found_error", "model: claude-nonexistent", kind::bad_request},
      {400, "invalid_request_error", "prompt is too long: 212345 tokens > 200000 maximum",
       kind::context_overflow},
      {400, "invalid_request_error",
       "max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for "
       "claude-sonnet-4-5",
       kind::output_too_large},
      {400, "invalid_request_error",
       "input length and `max_tokens` exceed context limit: 150000 + 64000 > 200000, decrease "
       "input length or `max_tokens` and try again",
       kind::output_too_large},
      {400, "invalid_request_error", "top_k: Extra inputs are not permitted",
       kind::unsupported_parameter},
      {400, "invalid_request_error", "messages: roles must alternate", kind::bad_request},
      {422, "", "unprocessable", kind::bad_request},
    }),
    f) {
  BOOST_TEST(to_string(classify_messages_api_error(f.status, f.type, f.message))
             == to_string(f.want));
}

BOOST_DATA_TEST_CASE(
    an_error_event_mid_stream_is_classified_by_its_type_alone,
    data::make(std::vector<anthropic_failure>{
      {0, "overloaded_error", "Overloaded", kind::server_error},
      {0, "api_error", "Internal server error", kind::server_error},
      {0, "rate_limit_error", "rate limited", kind::rate_limited},
      {0, "invalid_request_error", "prompt is too long: 9 tokens > 8 maximum",
       kind::context_overflow},
      {0, "something_new", "never seen before", kind::server_error},
      {0, "", "", kind::server_error},
    }),
    f) {
  BOOST_TEST(to_string(classify_messages_api_error(f.status, f.type, f.message))
             == to_string(f.want));
}

BOOST_AUTO_TEST_CASE(no_error_answer_is_ever_classified_as_success) {
  for (int status : {0, 200, 201, 302, 400, 418, 499, 500, 529, 599})
    for (const char* type : {"", "api_error", "weird"})
      BOOST_TEST(to_string(classify_messages_api_error(status, type, "")) != "none",
                 status << " " << type);
}

BOOST_AUTO_TEST_SUITE_END()
