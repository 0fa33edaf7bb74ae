// The session actor's state machines under CAF's deterministic scheduler, with the time
// set by hand (session_params::clock + sched.advance_time): the turn, T1/T2/T5, the
// error triggers T6-T9 (bypassing the cooldown, T7 lowering the window), the manual
// and outside triggers, the master switch, the fallback and abort paths, cooldown,
// anti-thrash with its probe, attempts and exhaustion, appends during a summary,
// and the restore (with repair) of the persisted trigger state.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <chrono>

#include "actors/session/session_actor.hpp"
#include "policies/request_pairing.hpp"
#include "policies/failure_protection.hpp"
#include "policies/summary_failure.hpp"
#include "policies/summary_markers.hpp"
#include "policies/token_estimate.hpp"
#include "tests/session_harness.hpp"
#include "tests/store_test_util.hpp"
#include "tests/test_print.hpp"

BOOST_AUTO_TEST_SUITE(session_actor_test)

using namespace mneme;
using namespace mneme::test;
using mneme::testing::err_of;
using namespace std::chrono_literals;
namespace bdata = boost::unit_test::data;

namespace {

// A text whose message estimate is exactly `tokens` (4 chars per token + 4 overhead).
std::string text_of(int64_t tokens) {
  std::string s;
  for (int64_t i = 0; i < tokens - message_overhead_tokens; ++i)
    s += "abcd";
  return s;
}

struct session_fixture : session_harness {
  session_fixture() {
    params.compression.threshold_tokens = 2000; // threshold = min(150,000, 2,000)
  }

  // Stored rows: a system prompt, then `n` alternating user/assistant rows of `tokens`.
  void seed(int n, int64_t tokens) {
    add(msg_role::system, "You are a helpful assistant.");
    for (int i = 0; i < n; ++i)
      add(i % 2 == 0 ? msg_role::user : msg_role::assistant, text_of(tokens));
  }

  // The session reports to `supervisor` here.
  void start() { start_supervised(); }

  caf::expected<compaction_report> compact(trigger by, std::string focus = {}) {
    return ask<compaction_report>(ss_compact_atom_v, by, focus);
  }

  static errc code(const caf::error& e) { return static_cast<errc>(e.code()); }
};

chat_answer answer_with_usage(int64_t prompt_tokens) {
  chat_answer a;
  a.content = "answer";
  a.prompt_tokens = prompt_tokens;
  return a;
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(session_actor, session_fixture)

BOOST_AUTO_TEST_CASE(a_turn_stores_the_user_message_and_the_answer_and_keeps_the_usage) {
  seed(2, 20);
  chat->script.push_back(answer_with_usage(321));
  start();
  auto r = turn("what now?");
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_TEST(r->answer == "answer");
  BOOST_TEST(r->prompt_tokens == 321);
  BOOST_TEST(r->compactions.empty());
  BOOST_TEST(r->live_messages == 5);
  auto live = db->live(sid);
  BOOST_REQUIRE(live.size() == 5u);
  BOOST_TEST(live[3].content == "what now?");
  BOOST_TEST(live[4].role == msg_role::assistant);
  // The model saw the whole live context, the new user message last.
  BOOST_REQUIRE(chat->requests.size() == 1u);
  BOOST_TEST(chat->requests[0].messages.size() == 4u);
  BOOST_TEST(chat->requests[0].messages.back().content == "what now?");
  BOOST_TEST(db->sessions[sid].triggers.last_prompt_tokens == 321);
  BOOST_TEST(r->live_tokens == estimate_messages_tokens(live));
}

// SPEC §3: no assistant may keep an unanswered call in what the model sees. A
// caller that crashed mid-tool leaves an assistant call with no result, then sends
// a new turn: the request carries a stub answer right after the call; the store
// keeps the rows as they were (nothing invented is stored).
BOOST_AUTO_TEST_CASE(an_unanswered_call_reaches_the_model_with_a_stub_answer_only) {
  seed(2, 20);
  start();
  message call;
  call.role = msg_role::assistant;
  call.tool_calls.push_back(tool_call{"call_9", "run_tests", "{}"});
  BOOST_REQUIRE(ask<int64_t>(ss_append_atom_v, call));
  auto r = turn("never mind, go on");
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_REQUIRE(chat->requests.size() == 1u);
  const auto& sent = chat->requests[0].messages;
  BOOST_REQUIRE(sent.size() == 6u); // system, 2 seeded, the call, its stub, the user row
  BOOST_TEST(sent[3].tool_calls.size() == 1u);
  BOOST_TEST((sent[4].role == msg_role::tool));
  BOOST_TEST(sent[4].tool_call_id == "call_9");
  BOOST_TEST(sent[4].content == std::string{unanswered_call_stub});
  BOOST_TEST(sent[5].content == "never mind, go on");
  auto live = db->live(sid);
  for (const auto& m : live)
    BOOST_TEST((m.role != msg_role::tool)); // the stub was never stored
}

BOOST_AUTO_TEST_CASE(t1_compacts_before_the_call_into_head_summary_and_tail) {
  seed(61, 50); // 3,000+ tokens over a threshold of 2,000; the tail starts with a user row
  start();
  auto r = turn();
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_REQUIRE(r->compactions.size() == 1u);
  BOOST_TEST(r->compactions[0].by == trigger::t1_pre_call);
  BOOST_TEST(r->compactions[0].committed);
  BOOST_TEST(!r->compactions[0].used_fallback);
  BOOST_REQUIRE(summarizer->requests.size() == 1u);
  BOOST_TEST(!summarizer->requests[0].max_tokens.has_value());
  auto live = db->live(sid);
  // system + 3 head + summary + 20 tail (the new user message is the last of them)
  // + the answer
  BOOST_REQUIRE(live.size() == 1u + 3u + 1u + 20u + 1u);
  BOOST_TEST(live[4].is_summary);
  BOOST_TEST(live[4].content.find(summary_prefix_tag) == 0u);
  BOOST_TEST(live[4].content.find("short summary") != std::string::npos);
  BOOST_TEST(live[24].content == "hello");
  // The model call saw the compacted context; nothing was deleted.
  BOOST_TEST(chat->requests[0].messages.size() == 25u);
  BOOST_TEST(db->count(sid) == 1u + 61u + 1u + 1u + 1u);
  BOOST_TEST(state().compactions_by_trigger[static_cast<size_t>(trigger::t1_pre_call)] == 1);
  BOOST_TEST(db->sessions[sid].triggers.compaction_count == 1);
}

// system prompt 11 + 10 x 50 + "hello" 6 = 517 tokens in the request.
BOOST_DATA_TEST_CASE_F(session_fixture, t1_fires_exactly_at_the_threshold,
                       bdata::make({516, 517, 518}) ^ bdata::make({true, true, false}),
                       threshold, fires) {
  seed(10, 50);
  params.compression.threshold_tokens = threshold;
  start();
  auto r = turn();
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_TEST(!r->compactions.empty() == fires);
  if (fires)
    BOOST_TEST(r->compactions[0].by == trigger::t1_pre_call);
}

BOOST_AUTO_TEST_CASE(t2_compacts_after_the_call_when_the_reported_usage_reaches_the_threshold) {
  seed(40, 40); // ~1,600 tokens: under the threshold locally
  chat->script.push_back(answer_with_usage(2000));
  start();
  auto r = turn();
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_REQUIRE(r->compactions.size() == 1u);
  BOOST_TEST(r->compactions[0].by == trigger::t2_post_call);
  BOOST_TEST(r->compactions[0].committed);
  // A committed compaction clears the stale usage figure.
  BOOST_TEST(db->sessions[sid].triggers.last_prompt_tokens == 0);
}

BOOST_AUTO_TEST_CASE(t2_does_not_fire_one_token_below_the_threshold) {
  seed(40, 40);
  chat->script.push_back(answer_with_usage(1999));
  start();
  auto r = turn();
  BOOST_REQUIRE(r);
  BOOST_TEST(r->compactions.empty());
  BOOST_TEST(db->sessions[sid].triggers.last_prompt_tokens == 1999);
}

namespace {
struct error_case {
  errc code;
  trigger want;
};
std::ostream& operator<<(std::ostream& os, const error_case& c) {
  return os << to_string(c.code) << "->" << c.want;
}
} // namespace

BOOST_DATA_TEST_CASE_F(session_fixture, error_answers_compact_through_a_cooldown_and_retry,
                       bdata::make({error_case{errc::llm_payload_too_large,
                                               trigger::t6_payload_too_large},
                                    error_case{errc::llm_long_context_rate_limit,
                                               trigger::t7_long_context_rate_limit},
                                    error_case{errc::llm_output_too_large,
                                               trigger::t8_output_too_large},
                                    error_case{errc::llm_context_overflow,
                                               trigger::t9_context_overflow}}),
                       c) {
  seed(40, 40); // under the threshold: only the error can start a compaction
  db->sessions[sid].triggers.cooldown_until_ms = t0 + 600'000;
  db->sessions[sid].triggers.cooldown_reason = "earlier failure";
  chat->script.push_back(caf::make_error(c.code, "injected"));
  start();
  auto r = turn();
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_REQUIRE(r->compactions.size() == 1u);
  BOOST_TEST(r->compactions[0].by == c.want);
  BOOST_TEST(r->compactions[0].committed);
  BOOST_TEST(chat->requests.size() == 2u); // the call was retried after compacting
  BOOST_TEST(r->answer == "fine");
}

BOOST_AUTO_TEST_CASE(t7_lowers_a_large_declared_window_to_200000) {
  seed(4, 20);
  params.model.context_length = 1'000'000;
  params.compression.threshold_tokens = 0;
  chat->script.push_back(caf::make_error(errc::llm_long_context_rate_limit, "injected"));
  start();
  BOOST_TEST(state().threshold_tokens == 500000);
  auto r = turn();
  BOOST_REQUIRE(r);
  auto s = state();
  BOOST_TEST(s.context_window == 200000);
  BOOST_TEST(s.threshold_tokens == 150000);
}

BOOST_AUTO_TEST_CASE(an_unsupported_parameter_error_is_not_an_overflow_and_fails_the_turn) {
  seed(40, 40);
  chat->script.push_back(caf::make_error(errc::llm_unsupported_parameter, "injected"));
  start();
  auto r = turn();
  BOOST_REQUIRE(!r);
  BOOST_TEST(code(r.error()) == errc::llm_unsupported_parameter);
  BOOST_TEST(summarizer->requests.empty());
  BOOST_TEST(db->live(sid).back().content == "hello"); // the user's message stays stored
}

BOOST_AUTO_TEST_CASE(a_failed_summary_commits_the_local_fallback_and_arms_a_persisted_cooldown) {
  seed(60, 50);
  summarizer->down = true;
  start();
  auto r = turn();
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_REQUIRE(!r->compactions.empty());
  BOOST_TEST(r->compactions[0].summary_failed);
  BOOST_TEST(r->compactions[0].used_fallback);
  BOOST_TEST(r->compactions[0].committed);
  auto live = db->live(sid);
  BOOST_TEST(live[4].is_summary);
  BOOST_TEST(live[4].content.find("Local fallback summary") != std::string::npos);
  const auto& t = db->sessions[sid].triggers;
  BOOST_TEST(t.cooldown_until_ms == t0 + 600 * 1000);
  BOOST_TEST(!t.cooldown_reason.empty());
  BOOST_TEST(t.fallback_streak == 1);
}

// Issue 25 item 4: 401, 403 and quota answers of the summarizer leave the
// transcript unchanged (no fallback row), cool the session down with the auth
// reason, count the failure and mark the summarizer auth_failed until it answers.
BOOST_DATA_TEST_CASE(an_auth_or_quota_answer_of_the_summarizer_aborts_without_a_fallback_row,
                     bdata::make({errc::llm_auth, errc::llm_quota}), refused) {
  params.metrics = std::make_shared<runtime_metrics>();
  seed(60, 50);
  summarizer->script.push_back(caf::make_error(refused, "HTTP 401; body: bad key"));
  start();
  auto r = compact(trigger::t12_manual_session);
  BOOST_REQUIRE(!r);
  BOOST_TEST(code(r.error()) == errc::compaction_failed);
  BOOST_TEST(render_error(r.error()).find("credentials or quota") != std::string::npos);
  BOOST_TEST(db->commits == 0);
  BOOST_TEST(db->live(sid).size() == 61u);
  const auto& t = db->sessions[sid].triggers;
  BOOST_TEST(t.cooldown_until_ms == t0 + 600'000);
  BOOST_TEST(is_auth_cooldown(t.cooldown_reason));
  BOOST_TEST(t.fallback_streak == 0);
  BOOST_TEST(params.metrics->summarizer_auth_failures.load() == 1u);
  BOOST_TEST((params.metrics->summarizer() == summarizer_health::auth_failed));
  // Once the key works again (a manual compaction bypasses the cooldown), the
  // summarizer's answer clears the health; the counter keeps its count.
  auto ok = compact(trigger::t12_manual_session);
  BOOST_REQUIRE_MESSAGE(ok, err_of(ok));
  BOOST_TEST(ok->committed);
  BOOST_TEST(!ok->used_fallback);
  BOOST_TEST((params.metrics->summarizer() == summarizer_health::ok));
  BOOST_TEST(params.metrics->summarizer_auth_failures.load() == 1u);
}

BOOST_AUTO_TEST_CASE(the_message_cap_writes_no_fallback_during_an_auth_cooldown) {
  seed(60, 50);
  params.compression.hygiene_hard_message_limit = 50;
  db->sessions[sid].triggers.cooldown_until_ms = t0 + 600'000;
  db->sessions[sid].triggers.cooldown_reason = auth_cooldown_reason_for("HTTP 401");
  start();
  auto r = compact(trigger::t3_hygiene_message_cap);
  BOOST_REQUIRE(!r);
  BOOST_TEST(code(r.error()) == errc::compaction_locked);
  BOOST_TEST(db->commits == 0);
  BOOST_TEST(summarizer->requests.empty());
}

BOOST_AUTO_TEST_CASE(the_auth_abort_is_reported_in_the_turn_as_its_own_outcome) {
  seed(60, 50);
  summarizer->script.push_back(caf::make_error(errc::llm_auth, "HTTP 403"));
  start();
  auto r = turn();
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_REQUIRE(!r->compactions.empty());
  BOOST_TEST(r->compactions[0].summary_failed);
  BOOST_TEST(r->compactions[0].summary_auth_failed);
  BOOST_TEST(!r->compactions[0].used_fallback);
  BOOST_TEST(!r->compactions[0].committed);
  for (const auto& m : db->live(sid)) BOOST_TEST(!m.is_summary);
}

BOOST_AUTO_TEST_CASE(abort_on_summary_failure_commits_nothing_and_answers_compaction_failed) {
  seed(60, 50);
  params.compression.abort_on_summary_failure = true;
  summarizer->down = true;
  start();
  auto r = compact(trigger::t12_manual_session);
  BOOST_REQUIRE(!r);
  BOOST_TEST(code(r.error()) == errc::compaction_failed);
  BOOST_TEST(db->commits == 0);
  BOOST_TEST(db->live(sid).size() == 61u);
  BOOST_TEST(db->sessions[sid].triggers.cooldown_until_ms == t0 + 600'000);
}

BOOST_AUTO_TEST_CASE(the_cooldown_blocks_automatic_triggers_until_600_seconds_have_passed) {
  seed(60, 50);
  db->sessions[sid].triggers.cooldown_until_ms = t0 + 600'000;
  db->sessions[sid].triggers.cooldown_reason = "summary failed";
  start();
  auto r = compact(trigger::t11_engine_request);
  BOOST_REQUIRE(!r);
  BOOST_TEST(code(r.error()) == errc::compaction_locked);
  clock_ms = t0 + 599'999;
  BOOST_TEST(!compact(trigger::t11_engine_request));
  clock_ms = t0 + 600'000;
  auto ok = compact(trigger::t11_engine_request);
  BOOST_REQUIRE_MESSAGE(ok, err_of(ok));
  BOOST_TEST(ok->committed);
  BOOST_TEST(db->sessions[sid].triggers.cooldown_until_ms == 0);
}

BOOST_AUTO_TEST_CASE(manual_compaction_bypasses_the_cooldown) {
  seed(60, 50);
  db->sessions[sid].triggers.cooldown_until_ms = t0 + 600'000;
  db->sessions[sid].triggers.cooldown_reason = "summary failed";
  start();
  for (auto by : {trigger::t12_manual_session, trigger::t14_channel_command,
                  trigger::t15_acp_command}) {
    auto r = compact(by);
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    BOOST_TEST(r->by == by);
  }
}

BOOST_AUTO_TEST_CASE(the_channel_focus_reaches_the_summarizer_prompt) {
  seed(60, 50);
  start();
  auto r = compact(trigger::t14_channel_command, "the database migration");
  BOOST_REQUIRE(r);
  BOOST_REQUIRE(summarizer->requests.size() == 1u);
  BOOST_TEST(summarizer->requests[0].messages[0].content.find("the database migration")
             != std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_master_switch_stops_automatic_triggers_but_not_manual_ones) {
  seed(60, 50);
  params.compression.enabled = false;
  start();
  auto r = turn();
  BOOST_REQUIRE(r);
  BOOST_TEST(r->compactions.empty());
  auto engine = compact(trigger::t11_engine_request);
  BOOST_REQUIRE(!engine);
  BOOST_TEST(code(engine.error()) == errc::compaction_locked);
  auto manual = compact(trigger::t12_manual_session);
  BOOST_REQUIRE(manual);
  BOOST_TEST(manual->committed);
}

BOOST_AUTO_TEST_CASE(two_ineffective_compactions_lock_for_300_seconds_then_one_probe_runs) {
  // Tiny rows: the summary, cut to 1.5 budgets (0.75 of the middle), plus its markers
  // saves less than 10% (or grows, which the size guard refuses): a strike either way.
  seed(60, 2);
  summarizer->default_content = text_of(36 * 6);
  start();
  for (int i = 0; i < 2; ++i) {
    auto r = compact(trigger::t11_engine_request);
    BOOST_REQUIRE_MESSAGE(r, err_of(r));
    BOOST_TEST(!r->effective);
  }
  BOOST_TEST(db->sessions[sid].triggers.anti_thrash_strikes == 2);
  BOOST_TEST(db->sessions[sid].triggers.lock_until_ms == clock_ms + 300'000);
  auto locked = compact(trigger::t11_engine_request);
  BOOST_REQUIRE(!locked);
  BOOST_TEST(code(locked.error()) == errc::compaction_locked);
  clock_ms += 300'000;
  summarizer->default_content = "short summary";
  // Enough rows for a middle again.
  for (int i = 0; i < 30; ++i) {
    message m;
    m.role = i % 2 == 0 ? msg_role::user : msg_role::assistant;
    m.content = text_of(50);
    BOOST_REQUIRE(ask<int64_t>(ss_append_atom_v, m));
  }
  auto probe = compact(trigger::t11_engine_request);
  BOOST_REQUIRE_MESSAGE(probe, err_of(probe));
  BOOST_TEST(probe->effective);
  const auto& t = db->sessions[sid].triggers;
  BOOST_TEST(t.anti_thrash_strikes == 0);
  BOOST_TEST(t.lock_until_ms == 0);
  BOOST_TEST(!t.probe_pending);
}

BOOST_AUTO_TEST_CASE(attempts_spent_without_fitting_report_compaction_exhausted) {
  seed(60, 50);
  params.compression.threshold_tokens = 0; // 150,000: only the model's refusals compact
  params.compression.max_attempts = 3;
  for (int i = 0; i < 20; ++i)
    chat->script.push_back(caf::make_error(errc::llm_context_overflow, "injected"));
  start();
  auto r = turn();
  BOOST_REQUIRE(!r);
  BOOST_TEST(code(r.error()) == errc::compaction_exhausted);
  // The first T9 compaction is effective; then three unproductive ones in a row.
  BOOST_TEST(chat->requests.size() == 5u);
  std::string reported;
  supervisor->receive(
    [&](sv_exhaust_atom, const std::string& id, const std::string& key) {
      reported = id + "/" + key;
    },
    caf::after(0s) >> [] {});
  BOOST_TEST(reported == sid + "/k");
}

BOOST_AUTO_TEST_CASE(messages_appended_while_a_summary_is_in_flight_land_after_the_tail) {
  seed(60, 50);
  summarizer->hold = true;
  start();
  self->send(session, ss_compact_atom_v, trigger::t12_manual_session, std::string{});
  sched.run();
  BOOST_REQUIRE(summarizer->held.size() == 1u);
  BOOST_TEST(state().compaction_in_flight);
  for (std::string text : {"late one", "late two"}) {
    message m;
    m.role = msg_role::user;
    m.content = text;
    BOOST_REQUIRE(ask<int64_t>(ss_append_atom_v, m));
  }
  auto second = compact(trigger::t12_manual_session);
  BOOST_REQUIRE(!second);
  BOOST_TEST(code(second.error()) == errc::compaction_in_flight);
  self->send(summary_pool, caf::ok_atom_v);
  sched.run();
  caf::expected<compaction_report> r{caf::error{}};
  self->receive([&](compaction_report& x) { r = x; }, [&](caf::error& e) { r = e; },
                caf::after(0s) >> [] {});
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_TEST(r->committed);
  auto live = db->live(sid);
  BOOST_REQUIRE(live.size() == 1u + 3u + 1u + 20u + 2u);
  BOOST_TEST(live[4].is_summary);
  BOOST_TEST(live[live.size() - 2].content == "late one");
  BOOST_TEST(live.back().content == "late two");
  BOOST_TEST(state().live_messages == static_cast<int64_t>(live.size()));
}

BOOST_AUTO_TEST_CASE(a_damaged_stored_trigger_state_is_repaired_and_rewritten_on_rehydrate) {
  seed(4, 20);
  db->sessions[sid].triggers.anti_thrash_strikes = 7;
  db->sessions[sid].triggers.cooldown_until_ms = t0 + 1000;
  start();
  auto s = state();
  BOOST_TEST(s.record.triggers.anti_thrash_strikes == 2);
  BOOST_TEST(s.record.triggers.probe_pending);
  BOOST_TEST(s.record.triggers.cooldown_reason == "unknown");
  BOOST_TEST(db->sessions[sid].triggers == s.record.triggers);
  BOOST_TEST(s.live_messages == 5);
}

BOOST_AUTO_TEST_CASE(a_restored_cooldown_is_honoured_after_a_restart) {
  seed(60, 50);
  summarizer->down = true;
  start();
  BOOST_REQUIRE(compact(trigger::t12_manual_session));
  self->send_exit(session, caf::exit_reason::kill);
  sched.run();
  summarizer->down = false;
  start(); // a new actor for the same session, from the store
  for (int i = 0; i < 30; ++i) {
    message m;
    m.content = text_of(50);
    BOOST_REQUIRE(ask<int64_t>(ss_append_atom_v, m));
  }
  auto r = compact(trigger::t11_engine_request);
  BOOST_REQUIRE(!r);
  BOOST_TEST(code(r.error()) == errc::compaction_locked);
}

BOOST_AUTO_TEST_CASE(t3_during_a_cooldown_compacts_with_the_fallback_without_the_summarizer) {
  seed(60, 50);
  params.compression.hygiene_hard_message_limit = 50;
  db->sessions[sid].triggers.cooldown_until_ms = t0 + 600'000;
  db->sessions[sid].triggers.cooldown_reason = "summary failed";
  start();
  auto r = compact(trigger::t3_hygiene_message_cap);
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_TEST(r->by == trigger::t3_hygiene_message_cap);
  BOOST_TEST(r->used_fallback);
  BOOST_TEST(!r->summary_failed);
  BOOST_TEST(summarizer->requests.empty());
}

BOOST_AUTO_TEST_CASE(t3_below_the_message_cap_does_nothing) {
  seed(48, 50); // 49 rows with the system prompt
  params.compression.hygiene_hard_message_limit = 50;
  params.compression.threshold_tokens = 0;
  start();
  auto r = compact(trigger::t3_hygiene_message_cap);
  BOOST_REQUIRE(r);
  BOOST_TEST(!r->committed);
  BOOST_TEST(db->commits == 0);
}

BOOST_AUTO_TEST_CASE(t13_compacts_only_around_the_given_position) {
  seed(60, 50);
  start();
  auto r = ask<compaction_report>(ss_local_atom_v, int64_t{30}, int64_t{5});
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_TEST(r->by == trigger::t13_manual_local);
  BOOST_TEST(r->archived_rows == 11);
  auto live = db->live(sid);
  BOOST_TEST(live.size() == 61u - 11u + 1u);
  BOOST_TEST(live[25].is_summary);
  auto head = ask<compaction_report>(ss_local_atom_v, int64_t{1}, int64_t{0});
  BOOST_REQUIRE(!head);
  BOOST_TEST(code(head.error()) == errc::bad_request);
}

BOOST_AUTO_TEST_CASE(t5_compacts_an_idle_session_over_the_64000_floor) {
  seed(70, 1000); // 70,000+ tokens
  params.model.context_length = 1'000'000; // threshold 500,000: only T5 can fire
  params.compression.threshold_tokens = 0;
  params.compression.idle_compact_after_seconds = 60;
  start();
  clock_ms += 59'000;
  sched.advance_time(59s);
  sched.run();
  BOOST_TEST(db->commits == 0);
  clock_ms += 1'000;
  sched.advance_time(1s);
  sched.run();
  BOOST_TEST(db->commits == 1);
  BOOST_TEST(state().compactions_by_trigger[static_cast<size_t>(trigger::t5_idle)] == 1);
}

BOOST_AUTO_TEST_CASE(t5_leaves_an_idle_session_under_the_floor_alone) {
  seed(60, 1000); // ~60,000 tokens: under 64,000
  params.model.context_length = 1'000'000;
  params.compression.threshold_tokens = 0;
  params.compression.idle_compact_after_seconds = 60;
  start();
  clock_ms += 120'000;
  sched.advance_time(120s);
  sched.run();
  BOOST_TEST(db->commits == 0);
}

BOOST_AUTO_TEST_CASE(a_failed_commit_changes_nothing_and_reports_the_storage_error) {
  seed(60, 50);
  db->fail_commits = true;
  start();
  auto before = db->live(sid);
  auto r = compact(trigger::t12_manual_session);
  BOOST_REQUIRE(!r);
  BOOST_TEST(code(r.error()) == errc::storage_failed);
  BOOST_TEST(db->live(sid).size() == before.size());
  BOOST_TEST(state().live_messages == static_cast<int64_t>(before.size()));
}

BOOST_AUTO_TEST_CASE(a_session_missing_from_the_store_fails_to_start) {
  sid = "missing";
  start();
  bool failed = false;
  self->request(session, caf::infinite, ss_state_atom_v)
    .receive([](session_snapshot&) {}, [&](caf::error&) { failed = true; });
  BOOST_TEST(failed);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END() // session_actor_test
