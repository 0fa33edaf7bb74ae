// Tests of the gateway's hygiene failure cooldown (policies/hygiene_gate.hpp): what
// T3/T4 do inside and outside the cooldown (T3 fallback-only, T4 skipped, T3 skipped
// too with abort_on_summary_failure), other triggers passing through, the cooldown
// boundary, and how each result of a hygiene compaction moves the cooldown (the
// default of 600 s pinned). Time is a parameter; nothing sleeps.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "policies/hygiene_gate.hpp"

BOOST_AUTO_TEST_SUITE(hygiene_gate_test)

using namespace mneme;
namespace data = boost::unit_test::data;

namespace {

constexpr time_ms now_ms = 1'700'000'000'000;
constexpr time_ms second = 1000;

struct gate_case {
  trigger fired;
  time_ms until;         // the key's cooldown_until
  bool abort_on_failure; // compression.abort_on_summary_failure
  hygiene_action want;
};

std::ostream& operator<<(std::ostream& os, const gate_case& c) {
  return os << to_string(c.fired) << " until=" << c.until << " abort=" << c.abort_on_failure
            << " -> " << c.want;
}

const gate_case gate_cases[] = {
  // No cooldown: both hygiene triggers compact.
  {trigger::t3_hygiene_message_cap, 0, false, hygiene_action::compact},
  {trigger::t4_hygiene_tokens, 0, false, hygiene_action::compact},
  // Inside the cooldown: T3 still compacts (death spiral), without the summarizer.
  {trigger::t3_hygiene_message_cap, now_ms + 1, false, hygiene_action::compact_fallback_only},
  {trigger::t4_hygiene_tokens, now_ms + 1, false, hygiene_action::skip},
  // abort_on_summary_failure forbids the fallback: T3 is skipped too.
  {trigger::t3_hygiene_message_cap, now_ms + 1, true, hygiene_action::skip},
  {trigger::t4_hygiene_tokens, now_ms + 1, true, hygiene_action::skip},
  // The cooldown ends at its instant.
  {trigger::t3_hygiene_message_cap, now_ms, false, hygiene_action::compact},
  {trigger::t4_hygiene_tokens, now_ms, false, hygiene_action::compact},
  {trigger::t4_hygiene_tokens, now_ms - 1, false, hygiene_action::compact},
  // Other triggers are not the gateway's hygiene: they pass through.
  {trigger::t1_pre_call, now_ms + 1, false, hygiene_action::compact},
  {trigger::t14_channel_command, now_ms + 1, true, hygiene_action::compact},
};

struct after_case {
  hygiene_result result;
  time_ms until_before;
  int64_t cooldown_seconds;
  time_ms want;
};

std::ostream& operator<<(std::ostream& os, const after_case& c) {
  return os << c.result << " before=" << c.until_before << " seconds=" << c.cooldown_seconds
            << " -> " << c.want;
}

const after_case after_cases[] = {
  {hygiene_result::failed, 0, 600, now_ms + 600 * second},
  {hygiene_result::failed, now_ms + 5, 600, now_ms + 600 * second}, // re-armed
  {hygiene_result::failed, 0, 30, now_ms + 30 * second},
  {hygiene_result::failed, 0, 0, 0},                               // 0 = off
  {hygiene_result::summarized, now_ms + 5, 600, 0},                        // clears
  {hygiene_result::summarized, 0, 600, 0},
  {hygiene_result::no_summary_call, now_ms + 5, 600, now_ms + 5},          // unchanged
  {hygiene_result::no_summary_call, 0, 600, 0},
  {hygiene_result::refused, now_ms + 5, 600, now_ms + 5},
  {hygiene_result::refused, 0, 600, 0},
};

} // namespace

BOOST_DATA_TEST_CASE(hygiene_triggers_are_gated_by_the_keys_cooldown, data::make(gate_cases), c) {
  compression_params params;
  params.abort_on_summary_failure = c.abort_on_failure;
  BOOST_TEST(gate_hygiene(c.fired, c.until, now_ms, params) == c.want, c);
}

BOOST_DATA_TEST_CASE(a_hygiene_result_moves_the_cooldown, data::make(after_cases), c) {
  compression_params params;
  params.hygiene_failure_cooldown_seconds = c.cooldown_seconds;
  BOOST_TEST(hygiene_cooldown_after(c.result, c.until_before, now_ms, params) == c.want, c);
}

BOOST_AUTO_TEST_CASE(a_report_is_failed_when_its_summary_failed_even_if_the_fallback_committed) {
  // (committed, used_fallback, summary_failed)
  BOOST_TEST(hygiene_result_of(true, true, true) == hygiene_result::failed);
  BOOST_TEST(hygiene_result_of(false, false, true) == hygiene_result::failed); // aborted
  BOOST_TEST(hygiene_result_of(true, false, false) == hygiene_result::summarized);
  // Fallback without a failed call: the session's own cooldown or a fallback-only ask.
  BOOST_TEST(hygiene_result_of(true, true, false) == hygiene_result::no_summary_call);
  // Nothing to compact, or the rule no longer matched.
  BOOST_TEST(hygiene_result_of(false, false, false) == hygiene_result::no_summary_call);
}

BOOST_AUTO_TEST_CASE(the_default_hygiene_failure_cooldown_is_600_seconds) {
  compression_params defaults;
  BOOST_TEST(defaults.hygiene_failure_cooldown_seconds == 600);
  auto until = hygiene_cooldown_after(hygiene_result::failed, 0, now_ms, defaults);
  BOOST_TEST(until == now_ms + 600 * second);
  BOOST_TEST(gate_hygiene(trigger::t4_hygiene_tokens, until, until - 1, defaults)
             == hygiene_action::skip);
  BOOST_TEST(gate_hygiene(trigger::t4_hygiene_tokens, until, until, defaults)
             == hygiene_action::compact);
}

BOOST_AUTO_TEST_CASE(the_cooldown_runs_only_strictly_before_its_end) {
  BOOST_TEST(!in_hygiene_cooldown(0, now_ms));
  BOOST_TEST(in_hygiene_cooldown(now_ms + 1, now_ms));
  BOOST_TEST(!in_hygiene_cooldown(now_ms, now_ms));
}

BOOST_AUTO_TEST_CASE(actions_and_results_print_their_names) {
  BOOST_TEST(to_string(hygiene_action::compact_fallback_only) == "compact_fallback_only");
  BOOST_TEST(to_string(hygiene_action::skip) == "skip");
  BOOST_TEST(to_string(hygiene_result::failed) == "failed");
  BOOST_TEST(to_string(hygiene_result::refused) == "refused");
}

BOOST_AUTO_TEST_SUITE_END() // hygiene_gate_test
