// Tests of failure protection (SPEC §5): every transition of the state diagram in
// policies/failure_protection.hpp, its numbered invariants, the SPEC numbers
// (600 s cooldown, 10% savings, two strikes, 300 s lock, 3 attempts) and the
// T3 fallback-only decision. Time is a variable of the fixture; nothing sleeps.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <ostream>
#include <vector>

#include "policies/failure_protection.hpp"
#include "policies/summary_failure.hpp"
#include "tests/print_vocabulary.hpp"

BOOST_AUTO_TEST_SUITE(failure_protection_test)

using namespace mneme;
namespace data = boost::unit_test::data;

namespace {

constexpr time_ms start_ms = 1'700'000'000'000;
constexpr int64_t second = 1000;

struct protection_fixture {
  compression_params params;
  trigger_state state;
  time_ms now = start_ms;

  void advance_ms(int64_t ms) { now += ms; }

  void done(const compaction_outcome& o) {
    BOOST_REQUIRE_EQUAL(on_compaction_done(state, o, now, params), outcome_error::none);
    BOOST_REQUIRE_EQUAL(first_violated_invariant(state), 0);
  }
  lock_decision check_now(trigger by) const { return check(state, by, now, params); }
  anti_thrash_phase phase() const { return phase_at(state, now); }

  // Two strikes in a row: the state is LOCKED from `now` for the lock time.
  void lock_by_two_strikes() {
    done(weak());
    done(weak());
    BOOST_REQUIRE_EQUAL(phase(), anti_thrash_phase::locked);
  }
  void fail_summary(const char* reason = "idle_timeout") { done(failed_with_fallback(reason)); }

  static compaction_outcome effective(trigger by = trigger::t1_pre_call) {
    return {by, 100000, 50000, false, false, false, {}};
  }
  // Saves 5%: a strike.
  static compaction_outcome weak(trigger by = trigger::t1_pre_call) {
    return {by, 100000, 95000, false, false, false, {}};
  }
  static compaction_outcome no_op(trigger by = trigger::t1_pre_call) {
    return {by, 100000, 100000, true, false, false, {}};
  }
  static compaction_outcome failed_with_fallback(const char* reason = "idle_timeout",
                                                 trigger by = trigger::t1_pre_call) {
    return {by, 100000, 40000, false, true, true, reason};
  }
  // A manual compaction whose summary failed; its fallback saved only 5%.
  static compaction_outcome weak_failed_manual() {
    return {trigger::t12_manual_session, 100000, 95000, false, true, true, "total_timeout"};
  }
  // abort_on_summary_failure: the summary failed and nothing was committed.
  static compaction_outcome aborted(trigger by = trigger::t1_pre_call) {
    return {by, 100000, 100000, false, true, false, "server_error"};
  }
};

const std::vector<trigger> automatic_triggers_but_t3{
  trigger::t1_pre_call, trigger::t2_post_call, trigger::t4_hygiene_tokens, trigger::t5_idle,
  trigger::t10_preflight, trigger::t11_engine_request};

const std::vector<trigger> bypassing_triggers{
  trigger::t6_payload_too_large, trigger::t7_long_context_rate_limit,
  trigger::t8_output_too_large,  trigger::t9_context_overflow,
  trigger::t12_manual_session,   trigger::t13_manual_local,
  trigger::t14_channel_command,  trigger::t15_acp_command};

const std::vector<trigger> error_triggers{
  trigger::t6_payload_too_large, trigger::t7_long_context_rate_limit,
  trigger::t8_output_too_large, trigger::t9_context_overflow};

const std::vector<trigger> manual_triggers{
  trigger::t12_manual_session, trigger::t13_manual_local, trigger::t14_channel_command,
  trigger::t15_acp_command};

} // namespace

// ---- Cooldown (SPEC §5.1) ------------------------------------------------------------------

BOOST_FIXTURE_TEST_CASE(a_failed_summary_refuses_automatic_compaction_until_exactly_600_seconds,
                        protection_fixture) {
  fail_summary("idle_timeout");
  BOOST_TEST(state.cooldown_until_ms == start_ms + 600 * second);
  BOOST_TEST(state.cooldown_reason == "idle_timeout");
  BOOST_TEST(in_cooldown(state, now));

  advance_ms(600 * second - 1);
  BOOST_TEST(check_now(trigger::t1_pre_call)
             == (lock_decision{lock_verdict::locked_cooldown, false, false,
                               start_ms + 600 * second}));
  advance_ms(1);
  BOOST_TEST(!in_cooldown(state, now));
  BOOST_TEST(check_now(trigger::t1_pre_call) == lock_decision{});
}

BOOST_DATA_TEST_CASE_F(protection_fixture, a_cooldown_refuses_every_automatic_trigger_but_t3,
                       data::make(automatic_triggers_but_t3), by) {
  fail_summary();
  advance_ms(10 * second);
  auto d = check_now(by);
  BOOST_TEST(d.verdict == lock_verdict::locked_cooldown);
  BOOST_TEST(d.locked_until_ms == start_ms + 600 * second);
  BOOST_TEST(!d.allowed());
}

BOOST_DATA_TEST_CASE_F(protection_fixture,
                       error_and_manual_triggers_bypass_both_cooldown_and_anti_thrash_lock,
                       data::make(bypassing_triggers), by) {
  fail_summary();
  BOOST_TEST(check_now(by) == lock_decision{});
  advance_ms(600 * second);
  lock_by_two_strikes();
  done(weak_failed_manual());
  BOOST_TEST(in_cooldown(state, now));
  BOOST_TEST(check_now(by) == lock_decision{});
  advance_ms(300 * second); // PROBE: a bypassing trigger is never the probe
  BOOST_TEST(check_now(by) == lock_decision{});
}

BOOST_FIXTURE_TEST_CASE(the_message_cap_runs_through_a_cooldown_fallback_only,
                        protection_fixture) {
  fail_summary();
  BOOST_TEST(check_now(trigger::t3_hygiene_message_cap)
             == (lock_decision{lock_verdict::allowed, false, true, 0}));
  advance_ms(600 * second);
  BOOST_TEST(check_now(trigger::t3_hygiene_message_cap) == lock_decision{});
}

BOOST_FIXTURE_TEST_CASE(the_message_cap_respects_the_cooldown_when_fallback_summaries_are_off,
                        protection_fixture) {
  params.abort_on_summary_failure = true;
  done(aborted());
  BOOST_TEST(check_now(trigger::t3_hygiene_message_cap).verdict
             == lock_verdict::locked_cooldown);
}

// Issue 25 item 4: an auth/quota abort writes no fallback row, so the cooldown it
// arms holds the message cap back too (no fallback-only T3 while the key is wrong).
BOOST_FIXTURE_TEST_CASE(the_message_cap_respects_the_cooldown_of_an_auth_abort,
                        protection_fixture) {
  compaction_outcome auth = aborted();
  auth.failure_reason = auth_cooldown_reason_for("HTTP 401");
  auth.auth_failed = true;
  done(auth);
  BOOST_TEST(is_auth_cooldown(state.cooldown_reason));
  BOOST_TEST(state.cooldown_until_ms == start_ms + 600 * second);
  BOOST_TEST(check_now(trigger::t3_hygiene_message_cap)
             == (lock_decision{lock_verdict::locked_cooldown, false, false,
                               start_ms + 600 * second}));
  for (trigger by : bypassing_triggers) BOOST_TEST(check_now(by) == lock_decision{});
  advance_ms(600 * second);
  BOOST_TEST(check_now(trigger::t3_hygiene_message_cap) == lock_decision{});
}

BOOST_FIXTURE_TEST_CASE(the_message_cap_respects_the_anti_thrash_lock, protection_fixture) {
  lock_by_two_strikes();
  BOOST_TEST(check_now(trigger::t3_hygiene_message_cap)
             == (lock_decision{lock_verdict::locked_anti_thrash, false, false,
                               start_ms + 300 * second}));
}

BOOST_FIXTURE_TEST_CASE(another_failure_during_a_cooldown_extends_it_from_the_new_failure,
                        protection_fixture) {
  fail_summary("idle_timeout");
  advance_ms(100 * second);
  done(failed_with_fallback("server_error", trigger::t12_manual_session));
  BOOST_TEST(state.cooldown_until_ms == start_ms + 700 * second);
  BOOST_TEST(state.cooldown_reason == "server_error");
}

BOOST_FIXTURE_TEST_CASE(a_failure_without_a_reason_still_names_one, protection_fixture) {
  done({trigger::t1_pre_call, 100000, 40000, false, true, true, {}});
  BOOST_TEST(state.cooldown_reason == "summary_failed");
}

BOOST_FIXTURE_TEST_CASE(an_llm_summary_that_succeeds_ends_the_cooldown_but_a_fallback_does_not,
                        protection_fixture) {
  fail_summary();
  done({trigger::t3_hygiene_message_cap, 100000, 60000, false, false, true, {}});
  BOOST_TEST(in_cooldown(state, now));
  done(effective(trigger::t14_channel_command));
  BOOST_TEST(!in_cooldown(state, now));
  BOOST_TEST(state.cooldown_reason.empty());
}

BOOST_FIXTURE_TEST_CASE(a_zero_second_cooldown_arms_nothing, protection_fixture) {
  params.summary_failure_cooldown_seconds = 0;
  fail_summary();
  BOOST_TEST(!in_cooldown(state, now));
  BOOST_TEST(check_now(trigger::t1_pre_call) == lock_decision{});
}

// ---- Anti-thrash (SPEC §5.2) ---------------------------------------------------------------

struct savings_case {
  int64_t before;
  int64_t after;
  bool effective;
};
std::ostream& operator<<(std::ostream& os, const savings_case& c) {
  return os << c.before << "->" << c.after << " effective=" << c.effective;
}

BOOST_DATA_TEST_CASE(a_compaction_is_effective_from_exactly_ten_percent_savings,
                     data::make(std::vector<savings_case>{
                       {100000, 90000, true},    // exactly 10%
                       {100000, 90001, false},   // just under 10%
                       {100000, 50000, true},
                       {100000, 100000, false},  // saved nothing
                       {100000, 120000, false},  // grew
                       {10, 9, true},
                       {0, 0, false},            // nothing to measure against
                       {150001, 135001, false},  // 15,000 of 150,001: just under 10%
                     }),
                     c) {
  compression_params params;
  compaction_outcome o{trigger::t1_pre_call, c.before, c.after, false, false, false, {}};
  BOOST_TEST(is_effective(o, params) == c.effective);
}

BOOST_AUTO_TEST_CASE(the_savings_bar_follows_the_configured_ratio) {
  compression_params params;
  params.anti_thrash_min_savings = 0.25;
  BOOST_TEST(!is_effective({trigger::t1_pre_call, 1000, 760, false, false, false, {}}, params));
  BOOST_TEST(is_effective({trigger::t1_pre_call, 1000, 750, false, false, false, {}}, params));
}

BOOST_AUTO_TEST_CASE(no_ops_and_aborted_summaries_are_never_effective) {
  compression_params params;
  BOOST_TEST(!is_effective(protection_fixture::no_op(), params));
  BOOST_TEST(!is_effective({trigger::t1_pre_call, 100000, 10000, false, true, false, "x"}, params));
}

BOOST_FIXTURE_TEST_CASE(one_strike_does_not_lock, protection_fixture) {
  done(weak());
  BOOST_TEST(state.anti_thrash_strikes == 1);
  BOOST_TEST(phase() == anti_thrash_phase::strike_one);
  BOOST_TEST(check_now(trigger::t1_pre_call) == lock_decision{});
}

BOOST_FIXTURE_TEST_CASE(two_consecutive_strikes_lock_automatic_compaction_for_300_seconds,
                        protection_fixture) {
  done(weak());
  advance_ms(5 * second);
  const time_ms second_strike = now;
  done(weak());
  BOOST_TEST(strikes_to_lock == 2);
  BOOST_TEST(state.lock_until_ms == second_strike + 300 * second);
  BOOST_TEST(phase() == anti_thrash_phase::locked);

  advance_ms(300 * second - 1);
  BOOST_TEST(check_now(trigger::t1_pre_call)
             == (lock_decision{lock_verdict::locked_anti_thrash, false, false,
                               second_strike + 300 * second}));
  advance_ms(1);
  BOOST_TEST(phase() == anti_thrash_phase::probe);
  BOOST_TEST(check_now(trigger::t1_pre_call)
             == (lock_decision{lock_verdict::allowed, true, false, 0}));
}

BOOST_FIXTURE_TEST_CASE(a_no_op_compaction_is_a_strike, protection_fixture) {
  done(no_op());
  BOOST_TEST(state.anti_thrash_strikes == 1);
  done(no_op());
  BOOST_TEST(phase() == anti_thrash_phase::locked);
}

// ---- Size guard (SPEC §5.6, issue 25) -------------------------------------------------------

// A compaction whose result would hold at least as many tokens as its input.
compaction_outcome grown(int64_t before, int64_t after, bool fallback) {
  compaction_outcome o{trigger::t1_pre_call, before, after, false, fallback, fallback, {}};
  o.grew = true;
  return o;
}

struct grew_case {
  int64_t before;
  int64_t after;
  bool fallback;
};
std::ostream& operator<<(std::ostream& os, const grew_case& c) {
  return os << c.before << "->" << c.after << " fallback=" << c.fallback;
}

BOOST_DATA_TEST_CASE_F(protection_fixture,
                       a_compaction_that_grew_commits_nothing_and_is_a_strike,
                       data::make(std::vector<grew_case>{
                         {3218, 3304, true},   // the fallback on an 8K window
                         {2333, 2815, true},   // the fake at the 2,000 floor
                         {5000, 5000, false},  // equal is not smaller
                         {100, 100000, false},
                       }),
                       c) {
  auto o = grown(c.before, c.after, c.fallback);
  BOOST_TEST(!o.committed());
  BOOST_TEST(!is_effective(o, params));
  done(o);
  BOOST_TEST(state.anti_thrash_strikes == 1);
  BOOST_TEST(state.compaction_count == 0);
  BOOST_TEST(state.fallback_streak == 0);
  done(o);
  BOOST_TEST(phase() == anti_thrash_phase::locked);
}

BOOST_FIXTURE_TEST_CASE(a_grown_probe_rearms_the_lock, protection_fixture) {
  lock_by_two_strikes();
  advance_ms(300 * second);
  BOOST_REQUIRE(phase() == anti_thrash_phase::probe);
  done(grown(1000, 1200, false));
  BOOST_TEST(phase() == anti_thrash_phase::locked);
}

BOOST_FIXTURE_TEST_CASE(a_grown_fallback_after_a_failed_summary_still_arms_the_cooldown,
                        protection_fixture) {
  auto o = grown(2333, 2815, true);
  o.failure_reason = "server_error";
  done(o);
  BOOST_TEST(in_cooldown(state, now));
  BOOST_TEST(state.compaction_count == 0);
}

BOOST_AUTO_TEST_CASE(grew_with_a_no_op_or_a_shrink_is_rejected) {
  auto noop = grown(100, 100, false);
  noop.nothing_to_compact = true;
  BOOST_TEST(validate(noop) == outcome_error::grew_but_shrank);
  BOOST_TEST(validate(grown(100, 99, false)) == outcome_error::grew_but_shrank);
  BOOST_TEST(validate(grown(100, 100, false)) == outcome_error::none);
}

BOOST_FIXTURE_TEST_CASE(an_effective_compaction_clears_the_strikes, protection_fixture) {
  done(weak());
  done(effective());
  BOOST_TEST(state.anti_thrash_strikes == 0);
  BOOST_TEST(phase() == anti_thrash_phase::open);
  done(weak());
  BOOST_TEST(phase() == anti_thrash_phase::strike_one);
}

BOOST_FIXTURE_TEST_CASE(an_aborted_summary_arms_the_cooldown_but_is_no_strike,
                        protection_fixture) {
  done(aborted());
  BOOST_TEST(state.anti_thrash_strikes == 0);
  BOOST_TEST(in_cooldown(state, now));
  BOOST_TEST(state.compaction_count == 0);
}

BOOST_FIXTURE_TEST_CASE(an_effective_probe_clears_the_lock, protection_fixture) {
  lock_by_two_strikes();
  advance_ms(300 * second);
  done(effective(trigger::t1_pre_call));
  BOOST_TEST(phase() == anti_thrash_phase::open);
  BOOST_TEST(state.anti_thrash_strikes == 0);
  BOOST_TEST(!state.probe_pending);
  BOOST_TEST(check_now(trigger::t2_post_call) == lock_decision{});
}

BOOST_DATA_TEST_CASE_F(protection_fixture, a_probe_that_does_not_help_rearms_the_lock,
                       data::make(std::vector<int>{0, 1, 2}), kind) {
  lock_by_two_strikes();
  advance_ms(300 * second);
  const time_ms probe_at = now;
  const compaction_outcome outcomes[] = {weak(trigger::t4_hygiene_tokens),
                                         no_op(trigger::t4_hygiene_tokens),
                                         aborted(trigger::t4_hygiene_tokens)};
  done(outcomes[kind]);
  BOOST_TEST(phase() == anti_thrash_phase::locked);
  BOOST_TEST(state.lock_until_ms == probe_at + 300 * second);
  BOOST_TEST(!check_now(trigger::t1_pre_call).allowed());
  BOOST_TEST(check_now(trigger::t3_hygiene_message_cap).verdict
             == lock_verdict::locked_anti_thrash);
}

BOOST_FIXTURE_TEST_CASE(only_one_probe_runs_per_expired_lock, protection_fixture) {
  lock_by_two_strikes();
  advance_ms(300 * second);
  BOOST_TEST(check_now(trigger::t1_pre_call).probe);
  done(weak());
  BOOST_TEST(!check_now(trigger::t1_pre_call).allowed());
}

BOOST_FIXTURE_TEST_CASE(a_bypassing_compaction_that_does_not_help_leaves_the_lock_alone,
                        protection_fixture) {
  lock_by_two_strikes();
  const trigger_state locked = state;
  done(weak(trigger::t12_manual_session));
  done(no_op(trigger::t9_context_overflow));
  BOOST_TEST(state.lock_until_ms == locked.lock_until_ms);
  BOOST_TEST(state.anti_thrash_strikes == 2);

  advance_ms(300 * second); // PROBE: a manual compaction is not the probe
  done(weak(trigger::t14_channel_command));
  BOOST_TEST(phase() == anti_thrash_phase::probe);
}

BOOST_DATA_TEST_CASE_F(protection_fixture, an_effective_error_trigger_compaction_clears_the_lock,
                       data::make(error_triggers), by) {
  lock_by_two_strikes();
  done(effective(by));
  BOOST_TEST(phase() == anti_thrash_phase::open);
  BOOST_TEST(check_now(trigger::t1_pre_call) == lock_decision{});
}

// SPEC §2/§5.2: manual triggers bypass the lock; they neither count nor clear strikes.
BOOST_DATA_TEST_CASE_F(protection_fixture, manual_compactions_never_count_an_anti_thrash_strike,
                       data::make(manual_triggers), by) {
  done(no_op(by));
  done(no_op(by));
  done(weak(by));
  BOOST_TEST(state.anti_thrash_strikes == 0);
  BOOST_TEST(phase() == anti_thrash_phase::open);
  BOOST_TEST(check_now(trigger::t1_pre_call) == lock_decision{});
}

BOOST_DATA_TEST_CASE_F(protection_fixture, manual_compactions_never_clear_an_anti_thrash_strike,
                       data::make(manual_triggers), by) {
  done(weak());
  done(effective(by));
  BOOST_TEST(state.anti_thrash_strikes == 1);
  done(weak());
  BOOST_TEST(phase() == anti_thrash_phase::locked); // the automatic strikes were consecutive
  const trigger_state locked = state;
  done(effective(by));
  BOOST_TEST((state.lock_until_ms == locked.lock_until_ms));
  BOOST_TEST(phase() == anti_thrash_phase::locked);
}

BOOST_FIXTURE_TEST_CASE(a_probe_in_a_cooldown_is_also_fallback_only_for_the_message_cap,
                        protection_fixture) {
  lock_by_two_strikes();
  done(weak_failed_manual());
  advance_ms(300 * second);
  BOOST_TEST(phase() == anti_thrash_phase::probe);
  BOOST_TEST(in_cooldown(state, now));
  BOOST_TEST(check_now(trigger::t3_hygiene_message_cap)
             == (lock_decision{lock_verdict::allowed, true, true, 0}));
  BOOST_TEST(check_now(trigger::t1_pre_call).verdict == lock_verdict::locked_cooldown);
}

BOOST_FIXTURE_TEST_CASE(when_both_locks_hold_the_refusal_names_the_one_that_ends_last,
                        protection_fixture) {
  lock_by_two_strikes();     // lock ends at start + 300 s
  done(weak_failed_manual()); // cooldown ends at start + 600 s, lock unchanged
  BOOST_TEST(check_now(trigger::t1_pre_call)
             == (lock_decision{lock_verdict::locked_cooldown, false, false,
                               start_ms + 600 * second}));
  // T3 may run (fallback-only) once the lock ends, so its refusal names the lock.
  BOOST_TEST(check_now(trigger::t3_hygiene_message_cap)
             == (lock_decision{lock_verdict::locked_anti_thrash, false, false,
                               start_ms + 300 * second}));
  advance_ms(400 * second);
  done({trigger::t3_hygiene_message_cap, 100000, 95000, false, false, true, {}}); // probe fails
  // The re-armed lock (start + 700 s) now ends after the cooldown (start + 600 s).
  BOOST_TEST(check_now(trigger::t1_pre_call)
             == (lock_decision{lock_verdict::locked_anti_thrash, false, false,
                               start_ms + 700 * second}));
}

BOOST_FIXTURE_TEST_CASE(a_zero_second_lock_goes_straight_to_the_probe, protection_fixture) {
  params.anti_thrash_lock_seconds = 0;
  done(weak());
  done(weak());
  BOOST_TEST(phase() == anti_thrash_phase::probe);
  BOOST_TEST(check_now(trigger::t1_pre_call).probe);
}

// ---- Timers, counters, invariants ----------------------------------------------------------

BOOST_FIXTURE_TEST_CASE(expire_timers_rewrites_expired_locks_once_and_is_idempotent,
                        protection_fixture) {
  lock_by_two_strikes();
  done(weak_failed_manual());
  BOOST_TEST(!expire_timers(state, now));
  advance_ms(300 * second);
  BOOST_TEST(expire_timers(state, now));
  BOOST_TEST(state.lock_until_ms == 0);
  BOOST_TEST(state.probe_pending);
  BOOST_TEST(in_cooldown(state, now));
  advance_ms(300 * second);
  BOOST_TEST(expire_timers(state, now));
  BOOST_TEST(state.cooldown_until_ms == 0);
  BOOST_TEST(state.cooldown_reason.empty());
  const trigger_state settled = state;
  BOOST_TEST(!expire_timers(state, now));
  BOOST_TEST((state == settled));
  BOOST_TEST(first_violated_invariant(state) == 0);
}

BOOST_FIXTURE_TEST_CASE(check_does_not_depend_on_whether_timers_were_expired_first,
                        protection_fixture) {
  lock_by_two_strikes();
  advance_ms(300 * second);
  trigger_state expired = state;
  expire_timers(expired, now);
  BOOST_TEST(check(state, trigger::t5_idle, now, params)
             == check(expired, trigger::t5_idle, now, params));
  BOOST_TEST(phase_at(state, now) == phase_at(expired, now));
}

BOOST_FIXTURE_TEST_CASE(committed_compactions_are_counted_and_fallbacks_form_a_streak,
                        protection_fixture) {
  fail_summary();
  fail_summary();
  BOOST_TEST(state.compaction_count == 2);
  BOOST_TEST(state.fallback_streak == 2);
  done(no_op());
  done(aborted());
  BOOST_TEST(state.compaction_count == 2);
  BOOST_TEST(state.fallback_streak == 2);
  done(effective(trigger::t12_manual_session));
  BOOST_TEST(state.compaction_count == 3);
  BOOST_TEST(state.fallback_streak == 0);
}

BOOST_FIXTURE_TEST_CASE(a_committed_compaction_forgets_the_api_usage_of_the_old_transcript,
                        protection_fixture) {
  state.last_prompt_tokens = 160000;
  done(no_op());
  BOOST_TEST(state.last_prompt_tokens == 160000);
  done(weak());
  BOOST_TEST(state.last_prompt_tokens == 0);
}

struct bad_outcome_case {
  compaction_outcome outcome;
  outcome_error want;
};
std::ostream& operator<<(std::ostream& os, const bad_outcome_case& c) {
  return os << c.outcome << " -> " << c.want;
}

BOOST_DATA_TEST_CASE(impossible_outcomes_are_rejected_by_name_and_change_nothing,
                     data::make(std::vector<bad_outcome_case>{
                       {{trigger::none, 10, 5, false, false, false, {}}, outcome_error::no_trigger},
                       {{trigger::t1_pre_call, -1, 5, false, false, false, {}},
                        outcome_error::negative_tokens},
                       {{trigger::t1_pre_call, 10, -5, false, false, false, {}},
                        outcome_error::negative_tokens},
                       {{trigger::t1_pre_call, 10, 10, true, true, false, "x"},
                        outcome_error::no_op_with_summary},
                       {{trigger::t1_pre_call, 10, 10, true, false, true, {}},
                        outcome_error::no_op_with_summary},
                       {{trigger::t1_pre_call, 10, 5, true, false, false, {}},
                        outcome_error::no_op_changed_tokens},
                     }),
                     c) {
  compression_params params;
  trigger_state state;
  state.last_prompt_tokens = 123;
  const trigger_state before = state;
  BOOST_TEST(validate(c.outcome) == c.want);
  BOOST_TEST(on_compaction_done(state, c.outcome, start_ms, params) == c.want);
  BOOST_TEST((state == before));
  BOOST_TEST(!to_string(c.want).empty());
}

struct invariant_case {
  trigger_state state;
  int broken;
};
std::ostream& operator<<(std::ostream& os, const invariant_case& c) {
  return os << c.state << " breaks " << c.broken;
}

trigger_state make_state(int32_t strikes, time_ms lock_until, bool probe,
                         time_ms cooldown_until = 0, std::string reason = {},
                         int32_t fallback_streak = 0, int64_t count = 0) {
  trigger_state s;
  s.anti_thrash_strikes = strikes;
  s.lock_until_ms = lock_until;
  s.probe_pending = probe;
  s.cooldown_until_ms = cooldown_until;
  s.cooldown_reason = std::move(reason);
  s.fallback_streak = fallback_streak;
  s.compaction_count = count;
  return s;
}

BOOST_DATA_TEST_CASE(each_broken_invariant_is_reported_by_its_number,
                     data::make(std::vector<invariant_case>{
                       {make_state(0, 0, false), 0},
                       {make_state(1, 0, false), 0},
                       {make_state(2, 5, false), 0},
                       {make_state(2, 0, true), 0},
                       {make_state(0, 0, false, 9, "timeout", 1, 1), 0},
                       {make_state(3, 5, false), 1},
                       {make_state(-1, 0, false), 1},
                       {make_state(1, 5, false), 2},
                       {make_state(2, 5, true), 2},
                       {make_state(1, 0, true), 3},
                       {make_state(2, 0, false), 4},
                       {make_state(0, 0, false, 9, {}), 5},
                       {make_state(0, 0, false, 0, "timeout"), 5},
                       {make_state(0, 0, false, 0, {}, 2, 1), 6},
                       {make_state(0, 0, false, 0, {}, -1, 0), 6},
                     }),
                     c) {
  BOOST_TEST(first_violated_invariant(c.state) == c.broken);
}

struct repair_case {
  trigger_state damaged;
  int broken;
  trigger_state repaired;
};
std::ostream& operator<<(std::ostream& os, const repair_case& c) {
  return os << c.damaged << " breaks " << c.broken << " -> " << c.repaired;
}

BOOST_DATA_TEST_CASE(repair_restores_the_invariants_without_ever_unlocking,
                     data::make(std::vector<repair_case>{
                       {make_state(1, 0, false), 0, make_state(1, 0, false)},
                       {make_state(7, 0, false), 1, make_state(2, 0, true)},
                       {make_state(7, 5, false), 1, make_state(2, 5, false)},
                       {make_state(-3, 0, false), 1, make_state(0, 0, false)},
                       {make_state(1, 5, false), 2, make_state(2, 5, false)},
                       {make_state(2, 5, true), 2, make_state(2, 5, false)},
                       {make_state(0, 0, true), 3, make_state(2, 0, true)},
                       {make_state(2, 0, false), 4, make_state(2, 0, true)},
                       {make_state(0, 0, false, 9, {}), 5, make_state(0, 0, false, 9, "unknown")},
                       {make_state(0, 0, false, 0, "x"), 5, make_state(0, 0, false)},
                       {make_state(0, 0, false, 0, {}, 5, 2), 6, make_state(0, 0, false, 0, {}, 2, 2)},
                       {make_state(0, 0, false, 0, {}, -1, -2), 6, make_state(0, 0, false)},
                       {make_state(0, -4, false), 2, make_state(0, 0, false)},
                       {make_state(0, 0, false, -1, "x"), 6, make_state(0, 0, false)},
                     }),
                     c) {
  trigger_state s = c.damaged;
  BOOST_TEST(repair(s) == c.broken);
  BOOST_TEST((s == c.repaired));
  BOOST_TEST(first_violated_invariant(s) == 0);
}

BOOST_FIXTURE_TEST_CASE(a_damaged_stored_row_is_repaired_before_an_outcome_is_applied,
                        protection_fixture) {
  state = make_state(9, 0, false, now + 5 * second, {});
  BOOST_TEST(check_now(trigger::t1_pre_call).verdict == lock_verdict::locked_cooldown);
  advance_ms(5 * second);
  BOOST_TEST(check_now(trigger::t1_pre_call)
             == (lock_decision{lock_verdict::allowed, true, false, 0}));
  done(weak()); // the probe fails: the lock re-arms
  BOOST_TEST(phase() == anti_thrash_phase::locked);
}

// ---- Attempts (SPEC §5.3) ------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(three_unproductive_attempts_exhaust_a_turn_that_still_does_not_fit) {
  compression_params params;
  turn_attempts attempts{params.max_attempts};
  BOOST_TEST(attempts.max_attempts() == 3);
  for (int i = 0; i < 3; ++i) {
    BOOST_TEST(!attempts.exhausted(false));
    BOOST_REQUIRE(attempts.begin());
    attempts.record_unproductive();
  }
  BOOST_TEST(attempts.spent());
  BOOST_TEST(attempts.exhausted(false));
  BOOST_TEST(!attempts.exhausted(true)); // spent but the context fits: no reset
  BOOST_TEST(!attempts.can_attempt());
  BOOST_TEST(!attempts.begin());
  BOOST_TEST(attempts.used() == 3);
}

BOOST_AUTO_TEST_CASE(a_refusal_by_a_lock_refunds_its_attempt) {
  turn_attempts attempts{3};
  for (int i = 0; i < 10; ++i) {
    BOOST_REQUIRE(attempts.begin());
    attempts.refund_locked();
  }
  BOOST_TEST(attempts.used() == 0);
  BOOST_REQUIRE(attempts.begin());
  attempts.record_unproductive();
  BOOST_REQUIRE(attempts.begin());
  attempts.refund_locked();
  BOOST_TEST(attempts.used() == 1);
  BOOST_TEST(!attempts.spent());
}

BOOST_AUTO_TEST_CASE(a_productive_attempt_restarts_the_consecutive_count) {
  turn_attempts attempts{3};
  for (int i = 0; i < 2; ++i) {
    BOOST_REQUIRE(attempts.begin());
    attempts.record_unproductive();
  }
  BOOST_REQUIRE(attempts.begin());
  attempts.record_productive();
  BOOST_TEST(attempts.used() == 0);
  BOOST_TEST(!attempts.exhausted(false));
}

BOOST_AUTO_TEST_CASE(a_new_turn_starts_with_the_full_budget) {
  turn_attempts attempts{2};
  for (int i = 0; i < 2; ++i) {
    BOOST_REQUIRE(attempts.begin());
    attempts.record_unproductive();
  }
  BOOST_TEST(attempts.exhausted(false));
  attempts.new_turn();
  BOOST_TEST(attempts.used() == 0);
  BOOST_TEST(attempts.can_attempt());
}

BOOST_AUTO_TEST_CASE(only_one_attempt_is_in_flight_at_a_time) {
  turn_attempts attempts{3};
  BOOST_REQUIRE(attempts.begin());
  BOOST_TEST(attempts.in_flight());
  BOOST_TEST(!attempts.can_attempt());
  BOOST_TEST(!attempts.begin());
  BOOST_TEST(attempts.used() == 1);
  attempts.record_unproductive();
  BOOST_TEST(!attempts.in_flight());
  BOOST_TEST(attempts.can_attempt());
}

// ---- The death spiral (SPEC §5.4) ----------------------------------------------------------

BOOST_FIXTURE_TEST_CASE(with_the_summarizer_down_the_message_cap_keeps_compacting_with_fallbacks,
                        protection_fixture) {
  // Every 60 s for an hour the session hits the cap; every summary call fails.
  int compactions = 0;
  int summarizer_calls = 0;
  for (int minute = 0; minute < 60; ++minute, advance_ms(60 * second)) {
    auto d = check_now(trigger::t3_hygiene_message_cap);
    BOOST_REQUIRE(d.allowed());
    ++compactions;
    if (d.fallback_only) {
      done({trigger::t3_hygiene_message_cap, 100000, 40000, false, false, true, {}});
    } else {
      ++summarizer_calls;
      done(failed_with_fallback("refused", trigger::t3_hygiene_message_cap));
    }
  }
  BOOST_TEST(compactions == 60);
  // The failing summarizer is asked once per 600 s cooldown, not once per compaction.
  BOOST_TEST(summarizer_calls == 6);
  BOOST_TEST(state.fallback_streak == 60);
  BOOST_TEST(state.compaction_count == 60);
}

BOOST_AUTO_TEST_SUITE_END() // failure_protection_test
