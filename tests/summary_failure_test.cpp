// Table tests of what a failed summarizer call leads to (policies/summary_failure,
// issue 25 item 4): fallback, abort, or the auth/quota abort; the summarizer's
// health; the one-line-per-endpoint-per-minute gate; endpoints without
// credentials in log lines.
#include <boost/test/unit_test.hpp>

#include <string>

#include "policies/summary_failure.hpp"

BOOST_TEST_DONT_PRINT_LOG_VALUE(mneme::summary_failure_action)
BOOST_TEST_DONT_PRINT_LOG_VALUE(mneme::summarizer_health)

BOOST_AUTO_TEST_SUITE(summary_failure_test)

using namespace mneme;

BOOST_AUTO_TEST_CASE(auth_and_quota_abort_whatever_abort_on_summary_failure_says) {
  using a = summary_failure_action;
  struct row {
    llm_error_kind kind;
    bool abort_flag;
    a want;
  };
  const row rows[] = {
    {llm_error_kind::auth, false, a::abort_auth},
    {llm_error_kind::auth, true, a::abort_auth},
    {llm_error_kind::quota, false, a::abort_auth},
    {llm_error_kind::quota, true, a::abort_auth},
    {llm_error_kind::server_error, false, a::fallback},
    {llm_error_kind::server_error, true, a::abort},
    {llm_error_kind::total_timeout, false, a::fallback},
    {llm_error_kind::rate_limited, false, a::fallback},
    {llm_error_kind::empty_answer, false, a::fallback},
    {llm_error_kind::malformed, true, a::abort},
    {llm_error_kind::bad_request, false, a::fallback},
  };
  for (const auto& r : rows)
    BOOST_TEST((on_summary_failure(r.kind, r.abort_flag) == r.want),
               to_string(r.kind) << " abort_on_summary_failure=" << r.abort_flag << " -> "
                                 << to_string(on_summary_failure(r.kind, r.abort_flag)));
}

BOOST_AUTO_TEST_CASE(the_auth_cooldown_reason_is_recognised_and_others_are_not) {
  const std::string reason = auth_cooldown_reason_for("HTTP 401; body: invalid api key");
  BOOST_TEST(reason == "summarizer_auth_failed: HTTP 401; body: invalid api key");
  BOOST_TEST(is_auth_cooldown(reason));
  BOOST_TEST(is_auth_cooldown(auth_cooldown_reason_for("")));
  BOOST_TEST(!is_auth_cooldown("idle_timeout"));
  BOOST_TEST(!is_auth_cooldown(""));
  BOOST_TEST(!is_auth_cooldown("summary_failed"));
}

BOOST_AUTO_TEST_CASE(health_turns_auth_failed_on_auth_and_ok_on_the_next_answer_only) {
  using h = summarizer_health;
  using e = summarizer_event;
  struct row {
    h from;
    e event;
    h to;
  };
  const row rows[] = {
    {h::ok, e::auth_failed, h::auth_failed},       {h::ok, e::other_failure, h::ok},
    {h::ok, e::answered, h::ok},                   {h::auth_failed, e::other_failure, h::auth_failed},
    {h::auth_failed, e::auth_failed, h::auth_failed}, {h::auth_failed, e::answered, h::ok},
  };
  for (const auto& r : rows)
    BOOST_TEST((next_summarizer_health(r.from, r.event) == r.to),
               to_string(r.from) << " + event " << static_cast<int>(r.event));
  BOOST_TEST(to_string(h::auth_failed) == "auth_failed");
  BOOST_TEST(to_string(h::ok) == "ok");
}

BOOST_AUTO_TEST_CASE(one_line_per_endpoint_per_minute_counting_what_was_held_back) {
  keyed_interval_gate gate;
  int64_t held = -1;
  BOOST_TEST(gate.allow("https://a", 1000, held));
  BOOST_TEST(held == 0);
  BOOST_TEST(!gate.allow("https://a", 1001, held));
  BOOST_TEST(!gate.allow("https://a", 60999, held));
  BOOST_TEST(gate.allow("https://b", 2000, held));  // another endpoint has its own minute
  BOOST_TEST(held == 0);
  BOOST_TEST(gate.allow("https://a", 61000, held)); // a minute after the last line
  BOOST_TEST(held == 2);
  BOOST_TEST(!gate.allow("https://a", 61000, held));
  BOOST_TEST(gate.allow("https://a", 200000, held));
  BOOST_TEST(held == 1);
}

BOOST_AUTO_TEST_CASE(endpoints_in_log_lines_lose_their_credentials_and_query) {
  struct row {
    const char* url;
    const char* shown;
  };
  const row rows[] = {
    {"https://api.example.com/v1/chat/completions", "https://api.example.com/v1/chat/completions"},
    {"https://user:sk-secret@api.example.com/v1/chat/completions",
     "https://api.example.com/v1/chat/completions"},
    {"https://api.example.com/v1/chat/completions?key=sk-secret",
     "https://api.example.com/v1/chat/completions"},
    {"http://k@127.0.0.1:8080", "http://127.0.0.1:8080"},
    {"http://127.0.0.1:8080/a@b", "http://127.0.0.1:8080/a@b"},  // '@' in the path is no credential
    {"", ""},
  };
  for (const auto& r : rows) BOOST_TEST(endpoint_for_log(r.url) == r.shown, r.url);
}

BOOST_AUTO_TEST_SUITE_END() // summary_failure_test
