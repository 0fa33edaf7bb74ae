// Tests of trigger evaluation (SPEC §2 table): every trigger T1-T15 on both sides
// of its boundary, the API usage overriding the estimate, the master switch, T7's
// window cap, bad input, and the interplay with failure protection's cooldown
// and anti-thrash lock. Time is a parameter; nothing sleeps.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <ostream>
#include <string>
#include <vector>

#include "policies/trigger_eval.hpp"
#include "tests/print_vocabulary.hpp"

BOOST_AUTO_TEST_SUITE(trigger_eval_test)

using namespace mneme;
namespace data = boost::unit_test::data;

namespace {

constexpr time_ms now_ms = 1'700'000'000'000;
constexpr int64_t second = 1000;

// The figures policies/threshold computes for a 200K-window model with defaults.
trigger_limits limits_200k() {
  trigger_limits l;
  l.threshold_tokens = 150000;
  l.hygiene_token_limit = 170000; // 85% of 200,000
  l.idle_floor_tokens = 64000;
  l.context_window = 200000;
  l.long_context_cap_tokens = 200000;
  l.compressible_window = 0;
  return l;
}

trigger_inputs at(eval_phase phase, int64_t estimate, int64_t api = 0, int64_t count = 10) {
  trigger_inputs in;
  in.phase = phase;
  in.estimated_tokens = estimate;
  in.api_prompt_tokens = api;
  in.message_count = count;
  return in;
}

trigger_inputs failed_call(llm_error_kind kind) {
  trigger_inputs in = at(eval_phase::post_call, 10000);
  in.last_error = kind;
  return in;
}

trigger_inputs idle_for(int64_t seconds, int64_t tokens) {
  trigger_inputs in = at(eval_phase::idle_tick, tokens);
  in.idle_seconds = seconds;
  return in;
}

trigger_inputs preflight(int64_t estimate, int64_t count, int passes_done = 0) {
  trigger_inputs in = at(eval_phase::preflight, estimate, 0, count);
  in.preflight_passes_done = passes_done;
  return in;
}

trigger_inputs manual(trigger kind) {
  trigger_inputs in = at(eval_phase::manual_command, 0);
  in.manual = kind;
  return in;
}

struct rule_case {
  std::string label;
  trigger_inputs in;
  int64_t idle_after_seconds; // compression.idle_compact_after_seconds
  int64_t compressible_window;
  trigger want;
};

std::ostream& operator<<(std::ostream& os, const rule_case& c) {
  return os << c.label << ' ' << c.in << " want=" << to_string(c.want);
}

const std::vector<rule_case> rule_table{
  // T1: estimate >= threshold before a call.
  {"T1 at the threshold", at(eval_phase::pre_call, 150000), 0, 0, trigger::t1_pre_call},
  {"T1 one below", at(eval_phase::pre_call, 149999), 0, 0, trigger::none},
  {"T1 API usage below overrides a high estimate", at(eval_phase::pre_call, 400000, 149999), 0,
   0, trigger::none},
  {"T1 API usage above overrides a low estimate", at(eval_phase::pre_call, 1000, 150000), 0, 0,
   trigger::t1_pre_call},
  // T2: API prompt tokens >= threshold after a call.
  {"T2 at the threshold", at(eval_phase::post_call, 0, 150000), 0, 0, trigger::t2_post_call},
  {"T2 one below", at(eval_phase::post_call, 900000, 149999), 0, 0, trigger::none},
  {"T2 never fires without usage", at(eval_phase::post_call, 900000, 0), 0, 0, trigger::none},
  // T6-T9: the error triggers; other failures fire nothing.
  {"T6 413", failed_call(llm_error_kind::payload_too_large), 0, 0,
   trigger::t6_payload_too_large},
  {"T7 long-context 429", failed_call(llm_error_kind::long_context_rate_limit), 0, 0,
   trigger::t7_long_context_rate_limit},
  {"T8 output too large", failed_call(llm_error_kind::output_too_large), 0, 0,
   trigger::t8_output_too_large},
  {"T9 overflow", failed_call(llm_error_kind::context_overflow), 0, 0,
   trigger::t9_context_overflow},
  {"unsupported parameter is no overflow", failed_call(llm_error_kind::unsupported_parameter), 0,
   0, trigger::none},
  {"plain 429", failed_call(llm_error_kind::rate_limited), 0, 0, trigger::none},
  {"5xx", failed_call(llm_error_kind::server_error), 0, 0, trigger::none},
  {"refused", failed_call(llm_error_kind::refused), 0, 0, trigger::none},
  {"idle timeout", failed_call(llm_error_kind::idle_timeout), 0, 0, trigger::none},
  {"malformed", failed_call(llm_error_kind::malformed), 0, 0, trigger::none},
  // T3: message count >= 5,000 whatever the tokens; T4: tokens >= 85% of the window.
  {"T3 at 5,000 messages", at(eval_phase::hygiene_check, 0, 0, 5000), 0, 0,
   trigger::t3_hygiene_message_cap},
  {"T3 one below", at(eval_phase::hygiene_check, 0, 0, 4999), 0, 0, trigger::none},
  {"T3 wins over T4", at(eval_phase::hygiene_check, 900000, 0, 5000), 0, 0,
   trigger::t3_hygiene_message_cap},
  {"T4 at the hygiene limit", at(eval_phase::hygiene_check, 170000, 0, 4999), 0, 0,
   trigger::t4_hygiene_tokens},
  {"T4 one below", at(eval_phase::hygiene_check, 169999), 0, 0, trigger::none},
  {"T4 API usage overrides", at(eval_phase::hygiene_check, 900000, 169999), 0, 0,
   trigger::none},
  // T5: idle >= idle_compact_after_seconds and tokens >= the floor; 0 = off.
  {"T5 at both limits", idle_for(3600, 64000), 3600, 0, trigger::t5_idle},
  {"T5 idle one second short", idle_for(3599, 64000), 3600, 0, trigger::none},
  {"T5 tokens one below the floor", idle_for(3600, 63999), 3600, 0, trigger::none},
  {"T5 off by default", idle_for(1000000, 1000000), 0, 0, trigger::none},
  // T10: estimate >= threshold, or count >= the compressible window.
  {"T10 at the threshold", preflight(150000, 10), 0, 0, trigger::t10_preflight},
  {"T10 one below", preflight(149999, 10), 0, 25, trigger::none},
  {"T10 at the compressible window", preflight(0, 25), 0, 25, trigger::t10_preflight},
  {"T10 one below the compressible window", preflight(0, 24), 0, 25, trigger::none},
  {"T10 count rule off", preflight(0, 100000), 0, 0, trigger::none},
  // T11: an engine may ask below the threshold.
  {"T11 below the threshold", at(eval_phase::engine_request, 0, 0, 0), 0, 0,
   trigger::t11_engine_request},
  // T12-T15: manual, as asked.
  {"T12", manual(trigger::t12_manual_session), 0, 0, trigger::t12_manual_session},
  {"T13", manual(trigger::t13_manual_local), 0, 0, trigger::t13_manual_local},
  {"T14", manual(trigger::t14_channel_command), 0, 0, trigger::t14_channel_command},
  {"T15", manual(trigger::t15_acp_command), 0, 0, trigger::t15_acp_command},
};

std::vector<rule_case> firing_rows() {
  std::vector<rule_case> rows;
  for (const auto& row : rule_table)
    if (row.want != trigger::none) rows.push_back(row);
  return rows;
}

compression_params params_for(const rule_case& c) {
  compression_params p;
  p.idle_compact_after_seconds = c.idle_after_seconds;
  return p;
}

trigger_limits limits_for(const rule_case& c) {
  trigger_limits l = limits_200k();
  l.compressible_window = c.compressible_window;
  return l;
}

} // namespace

BOOST_DATA_TEST_CASE(each_trigger_fires_at_its_boundary_and_not_one_below,
                     data::make(rule_table), c) {
  const auto d = evaluate_triggers(c.in, limits_for(c), params_for(c), trigger_state{}, now_ms);
  BOOST_TEST(to_string(d.fired) == to_string(c.want));
  BOOST_TEST(d.compact == (c.want != trigger::none));
  BOOST_TEST(d.skip == (c.want == trigger::none ? trigger_skip::no_rule_matched
                                                 : trigger_skip::none));
  BOOST_TEST(d.bypasses_locks == bypasses_locks(c.want));
  BOOST_TEST(d.error == trigger_input_error::none);
  BOOST_TEST(!d.fallback_only());
  BOOST_TEST(!d.probe());
}

BOOST_DATA_TEST_CASE(the_master_switch_stops_t1_to_t11_and_leaves_manual_compaction,
                     data::make(firing_rows()), c) {
  compression_params p = params_for(c);
  p.enabled = false;
  const auto d = evaluate_triggers(c.in, limits_for(c), p, trigger_state{}, now_ms);
  BOOST_TEST(to_string(d.fired) == to_string(c.want)); // still reported
  if (is_manual(c.want)) {
    BOOST_TEST(d.compact);
    BOOST_TEST(d.skip == trigger_skip::none);
  } else {
    BOOST_TEST(!d.compact);
    BOOST_TEST(d.skip == trigger_skip::master_switch_off);
  }
}

BOOST_AUTO_TEST_CASE(the_api_figure_is_the_one_considered_whenever_it_is_known) {
  compression_params p;
  auto d = evaluate_triggers(at(eval_phase::pre_call, 400000, 90000), limits_200k(), p,
                             trigger_state{}, now_ms);
  BOOST_TEST(d.tokens_considered == 90000);
  d = evaluate_triggers(at(eval_phase::pre_call, 400000, 0), limits_200k(), p, trigger_state{},
                        now_ms);
  BOOST_TEST(d.tokens_considered == 400000);
  BOOST_TEST(to_string(d.fired) == to_string(trigger::t1_pre_call));
}

BOOST_AUTO_TEST_CASE(the_message_cap_is_the_configured_one) {
  compression_params p;
  p.hygiene_hard_message_limit = 300;
  auto fired = [&](int64_t count) {
    return evaluate_triggers(at(eval_phase::hygiene_check, 0, 0, count), limits_200k(), p,
                             trigger_state{}, now_ms)
      .fired;
  };
  BOOST_TEST(to_string(fired(300)) == to_string(trigger::t3_hygiene_message_cap));
  BOOST_TEST(to_string(fired(299)) == to_string(trigger::none));
  p.hygiene_hard_message_limit = 0; // off
  BOOST_TEST(to_string(fired(1000000)) == to_string(trigger::none));
}

// ---- T7 window cap -------------------------------------------------------------------------

struct window_case {
  int64_t window;
  bool enabled;
  int64_t want;
};
std::ostream& operator<<(std::ostream& os, const window_case& c) {
  return os << "window=" << c.window << " enabled=" << c.enabled << " want=" << c.want;
}

BOOST_DATA_TEST_CASE(a_long_context_429_caps_the_declared_window_at_200k,
                     data::make(std::vector<window_case>{
                       {1000000, true, 200000},
                       {200001, true, 200000},
                       {200000, true, 200000},
                       {128000, true, 128000},
                       {1000000, false, 200000}, // a fact about the API, switch or not
                     }),
                     c) {
  compression_params p;
  p.enabled = c.enabled;
  trigger_limits l = limits_200k();
  l.context_window = c.window;
  const auto d = evaluate_triggers(failed_call(llm_error_kind::long_context_rate_limit), l, p,
                                   trigger_state{}, now_ms);
  BOOST_REQUIRE(d.capped_context_window.has_value());
  BOOST_TEST(*d.capped_context_window == c.want);
}

BOOST_AUTO_TEST_CASE(no_other_trigger_touches_the_declared_window) {
  compression_params p;
  for (const auto& row : rule_table) {
    if (row.want == trigger::t7_long_context_rate_limit) continue;
    const auto d = evaluate_triggers(row.in, limits_for(row), p, trigger_state{}, now_ms);
    BOOST_TEST(!d.capped_context_window.has_value(), row.label);
  }
}

// ---- T10 passes ----------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(the_preflight_loop_runs_at_most_three_passes_per_turn) {
  compression_params p;
  BOOST_TEST(p.max_attempts == 3);
  for (int done = 0; done < 3; ++done) {
    const auto d = evaluate_triggers(preflight(150000, 10, done), limits_200k(), p,
                                     trigger_state{}, now_ms);
    BOOST_TEST(d.compact, "pass " << done);
  }
  const auto d = evaluate_triggers(preflight(150000, 10, 3), limits_200k(), p, trigger_state{},
                                   now_ms);
  BOOST_TEST(!d.compact);
  BOOST_TEST(d.skip == trigger_skip::preflight_passes_spent);
  BOOST_TEST(to_string(d.fired) == to_string(trigger::t10_preflight));
}

BOOST_AUTO_TEST_CASE(the_preflight_pass_limit_follows_max_attempts) {
  compression_params p;
  p.max_attempts = 1;
  BOOST_TEST(evaluate_triggers(preflight(150000, 10, 0), limits_200k(), p, trigger_state{}, now_ms)
               .compact);
  BOOST_TEST(!evaluate_triggers(preflight(150000, 10, 1), limits_200k(), p, trigger_state{},
                                now_ms)
                .compact);
}

// ---- Interplay with failure protection -----------------------------------------------------

namespace {

// A state whose summary call failed at now_ms (cooldown until now + 600 s).
trigger_state cooling_state() {
  compression_params p;
  trigger_state s;
  on_compaction_done(s, {trigger::t1_pre_call, 100000, 40000, false, true, true, "refused"},
                     now_ms, p);
  return s;
}

// A state locked by two strikes at now_ms (lock until now + 300 s).
trigger_state locked_state() {
  compression_params p;
  trigger_state s;
  for (int i = 0; i < 2; ++i)
    on_compaction_done(s, {trigger::t1_pre_call, 100000, 99000, false, false, false, {}},
                       now_ms, p);
  return s;
}

struct lock_case {
  std::string label;
  bool cooling; // else anti-thrash locked
  rule_case rule;
  bool compact;
  bool fallback_only;
};
std::ostream& operator<<(std::ostream& os, const lock_case& c) {
  return os << c.label << " cooling=" << c.cooling;
}

std::vector<lock_case> lock_table() {
  std::vector<lock_case> rows;
  for (const auto& r : firing_rows()) {
    const bool bypass = bypasses_locks(r.want);
    const bool t3 = r.want == trigger::t3_hygiene_message_cap;
    rows.push_back({r.label + " in cooldown", true, r, bypass || t3, t3});
    rows.push_back({r.label + " in anti-thrash lock", false, r, bypass, false});
  }
  return rows;
}

} // namespace

BOOST_DATA_TEST_CASE(locks_stop_automatic_triggers_and_let_errors_and_manual_ones_through,
                     data::make(lock_table()), c) {
  const trigger_state s = c.cooling ? cooling_state() : locked_state();
  const auto d = evaluate_triggers(c.rule.in, limits_for(c.rule), params_for(c.rule), s,
                                   now_ms + 60 * second);
  BOOST_TEST(d.compact == c.compact);
  BOOST_TEST(d.fallback_only() == c.fallback_only);
  if (!c.compact) {
    BOOST_TEST(d.skip == trigger_skip::locked);
    BOOST_TEST(d.lock.verdict
               == (c.cooling ? lock_verdict::locked_cooldown : lock_verdict::locked_anti_thrash));
    BOOST_TEST(d.lock.locked_until_ms == now_ms + (c.cooling ? 600 : 300) * second);
  }
}

BOOST_AUTO_TEST_CASE(after_the_lock_the_next_automatic_trigger_runs_as_the_probe) {
  compression_params p;
  const trigger_state s = locked_state();
  auto d = evaluate_triggers(at(eval_phase::pre_call, 150000), limits_200k(), p, s,
                             now_ms + 300 * second - 1);
  BOOST_TEST(!d.compact);
  d = evaluate_triggers(at(eval_phase::pre_call, 150000), limits_200k(), p, s,
                        now_ms + 300 * second);
  BOOST_TEST(d.compact);
  BOOST_TEST(d.probe());
  d = evaluate_triggers(manual(trigger::t14_channel_command), limits_200k(), p, s,
                        now_ms + 300 * second);
  BOOST_TEST(d.compact);
  BOOST_TEST(!d.probe());
}

BOOST_AUTO_TEST_CASE(after_the_cooldown_automatic_triggers_run_again_with_the_summarizer) {
  compression_params p;
  const trigger_state s = cooling_state();
  auto d = evaluate_triggers(at(eval_phase::hygiene_check, 0, 0, 5000), limits_200k(), p, s,
                             now_ms + 600 * second);
  BOOST_TEST(d.compact);
  BOOST_TEST(!d.fallback_only());
  d = evaluate_triggers(at(eval_phase::pre_call, 150000), limits_200k(), p, s,
                        now_ms + 600 * second);
  BOOST_TEST(d.compact);
}

BOOST_AUTO_TEST_CASE(a_switched_off_session_reports_the_switch_not_the_lock) {
  compression_params p;
  p.enabled = false;
  const auto d = evaluate_triggers(at(eval_phase::pre_call, 150000), limits_200k(), p,
                                   cooling_state(), now_ms);
  BOOST_TEST(d.skip == trigger_skip::master_switch_off);
}

// ---- Bad input -----------------------------------------------------------------------------

struct bad_case {
  std::string label;
  trigger_inputs in;
  trigger_limits limits;
  trigger_input_error want;
};
std::ostream& operator<<(std::ostream& os, const bad_case& c) {
  return os << c.label << " want=" << c.want;
}

namespace {

trigger_limits with(int64_t trigger_limits::*field, int64_t value) {
  trigger_limits l = limits_200k();
  l.*field = value;
  return l;
}

trigger_inputs with_passes(int passes) { return preflight(0, 0, passes); }

} // namespace

BOOST_DATA_TEST_CASE(bad_input_fires_nothing_and_names_what_was_wrong,
                     data::make(std::vector<bad_case>{
                       {"negative estimate", at(eval_phase::pre_call, -1), limits_200k(),
                        trigger_input_error::negative_tokens},
                       {"negative usage", at(eval_phase::post_call, 0, -5), limits_200k(),
                        trigger_input_error::negative_tokens},
                       {"negative count", at(eval_phase::hygiene_check, 0, 0, -1), limits_200k(),
                        trigger_input_error::negative_message_count},
                       {"negative idle", idle_for(-1, 0), limits_200k(),
                        trigger_input_error::negative_idle_seconds},
                       {"negative passes", with_passes(-1), limits_200k(),
                        trigger_input_error::negative_preflight_passes},
                       {"zero threshold", at(eval_phase::pre_call, 1),
                        with(&trigger_limits::threshold_tokens, 0),
                        trigger_input_error::non_positive_threshold},
                       {"zero threshold post call", at(eval_phase::post_call, 0, 1),
                        with(&trigger_limits::threshold_tokens, 0),
                        trigger_input_error::non_positive_threshold},
                       {"zero threshold preflight", preflight(1, 1),
                        with(&trigger_limits::threshold_tokens, -3),
                        trigger_input_error::non_positive_threshold},
                       {"zero hygiene limit", at(eval_phase::hygiene_check, 1),
                        with(&trigger_limits::hygiene_token_limit, 0),
                        trigger_input_error::non_positive_hygiene_limit},
                       {"zero idle floor", idle_for(1, 1),
                        with(&trigger_limits::idle_floor_tokens, 0),
                        trigger_input_error::non_positive_idle_floor},
                       {"zero window on T7", failed_call(llm_error_kind::long_context_rate_limit),
                        with(&trigger_limits::context_window, 0),
                        trigger_input_error::non_positive_context_window},
                       {"zero cap on T7", failed_call(llm_error_kind::long_context_rate_limit),
                        with(&trigger_limits::long_context_cap_tokens, 0),
                        trigger_input_error::non_positive_long_context_cap},
                       {"manual without a manual kind", manual(trigger::t1_pre_call),
                        limits_200k(), trigger_input_error::manual_kind_not_manual},
                       {"manual with no kind", manual(trigger::none), limits_200k(),
                        trigger_input_error::manual_kind_not_manual},
                     }),
                     c) {
  const compression_params params;
  const auto d = evaluate_triggers(c.in, c.limits, params, trigger_state{}, now_ms);
  BOOST_TEST(d.error == c.want);
  BOOST_TEST(d.skip == trigger_skip::bad_input);
  BOOST_TEST(!d.compact);
  BOOST_TEST(to_string(d.fired) == to_string(trigger::none));
  BOOST_TEST(!to_string(d.error).empty());
}

BOOST_AUTO_TEST_CASE(a_phase_ignores_the_figures_it_does_not_compare_against) {
  const trigger_limits none{};
  const compression_params params;
  const auto d = evaluate_triggers(manual(trigger::t12_manual_session), none, params,
                                   trigger_state{}, now_ms);
  BOOST_TEST(d.compact);
  const auto e = evaluate_triggers(failed_call(llm_error_kind::context_overflow), none, params,
                                   trigger_state{}, now_ms);
  BOOST_TEST(e.compact);
}

BOOST_AUTO_TEST_SUITE_END() // trigger_eval_test
