// The embedder's decisions (policies/embed_plan.hpp): what is embedded, the text cut,
// split / skip / back-off by failure kind, the capped exponential back-off with
// Retry-After, and batch sizes shrinking on splits and growing back on successes.
#include <boost/test/unit_test.hpp>

#include "policies/embed_plan.hpp"

BOOST_AUTO_TEST_SUITE(embed_plan_test)

using namespace mneme;

BOOST_AUTO_TEST_CASE(user_assistant_summary_rows_and_active_facts_are_embedded) {
  BOOST_TEST(worth_embedding("user", false, true, "the deploy broke"));
  BOOST_TEST(worth_embedding("assistant", false, true, "rollout failed"));
  BOOST_TEST(worth_embedding("system", true, true, "summary of the start"));
  BOOST_TEST(worth_embedding("fact", false, true, "editor: vim"));
  BOOST_TEST(!worth_embedding("fact", false, false, "editor: vim"));
  BOOST_TEST(!worth_embedding("tool", false, true, "exit status 1"));
  BOOST_TEST(!worth_embedding("system", false, true, "You are a helpful assistant."));
  BOOST_TEST(!worth_embedding("user", false, true, ""));
  BOOST_TEST(!worth_embedding("assistant", false, true, " \n\t "));
}

BOOST_AUTO_TEST_CASE(the_text_is_cut_to_whole_characters) {
  BOOST_TEST(embed_input("数据库卡住了", 3) == "数据库");
  BOOST_TEST(embed_input("abc", 10) == "abc");
  BOOST_TEST(embed_input("abcdef", 2) == "ab");
}

BOOST_AUTO_TEST_CASE(too_big_or_refused_batches_split_down_to_one_row_then_skip_it) {
  for (auto kind : {llm_error_kind::payload_too_large, llm_error_kind::context_overflow,
                    llm_error_kind::bad_request, llm_error_kind::unsupported_parameter}) {
    BOOST_TEST((on_failure(kind, 8) == embed_action::split), kind);
    BOOST_TEST((on_failure(kind, 1) == embed_action::skip), kind);
  }
  for (auto kind : {llm_error_kind::refused, llm_error_kind::server_error,
                    llm_error_kind::rate_limited, llm_error_kind::auth, llm_error_kind::quota,
                    llm_error_kind::malformed, llm_error_kind::total_timeout,
                    llm_error_kind::idle_timeout}) {
    BOOST_TEST((on_failure(kind, 8) == embed_action::back_off), kind);
    BOOST_TEST((on_failure(kind, 1) == embed_action::back_off), kind);
  }
}

BOOST_AUTO_TEST_CASE(back_off_doubles_from_the_initial_wait_up_to_the_cap) {
  BOOST_TEST(backoff_ms(1, 1000, 300000) == 1000);
  BOOST_TEST(backoff_ms(2, 1000, 300000) == 2000);
  BOOST_TEST(backoff_ms(5, 1000, 300000) == 16000);
  BOOST_TEST(backoff_ms(9, 1000, 300000) == 256000);
  BOOST_TEST(backoff_ms(10, 1000, 300000) == 300000);
  BOOST_TEST(backoff_ms(1000000, 1000, 300000) == 300000); // no overflow, no hot loop
}

BOOST_AUTO_TEST_CASE(retry_after_lengthens_the_wait_up_to_the_cap_never_shortens_it) {
  BOOST_TEST(backoff_ms(1, 1000, 300000, 30) == 30000);
  BOOST_TEST(backoff_ms(6, 1000, 300000, 1) == 32000);
  BOOST_TEST(backoff_ms(1, 1000, 60000, 600) == 60000);
}

BOOST_AUTO_TEST_CASE(batches_halve_on_a_split_and_double_back_after_successes) {
  BOOST_TEST(after_split(64) == 32u);
  BOOST_TEST(after_split(1) == 1u);
  BOOST_TEST(after_success(1, 64) == 2u);
  BOOST_TEST(after_success(32, 64) == 64u);
  BOOST_TEST(after_success(64, 64) == 64u);
  BOOST_TEST(after_success(64, 48) == 48u); // never above the configured size
}

BOOST_AUTO_TEST_SUITE_END()
