// The whole runtime (storage, pools, supervisor, gateway, sessions) against the
// in-process fake LLM server over loopback and a real SQLite file: a turn end to end,
// the worked example of the design document (800 messages over a 100,000 threshold ->
// head 3 + summary + tail 20), the error triggers T6/T7/T9 from real HTTP answers, the
// summarizer down (local fallback), T4 and channel commands through the gateway, idle
// eviction and rehydration, exhaustion -> reset, a refused tool output in the head
// evicted instead of a reset loop, a crash mid-compaction restarted by the
// supervisor, and the death spiral of SPEC §5.4 (chat and summarizer down, 6,000
// messages, live context bounded by T3 + fallback, nothing lost).
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <set>
#include <thread>

#include "actors/runtime.hpp"
#include "policies/eviction_plan.hpp"
#include "policies/token_estimate.hpp"
#include "tests/serve_runtime_fixture.hpp"

BOOST_AUTO_TEST_SUITE(runtime_integration_test)

using namespace mneme;
using namespace mneme::test;
using mneme::testing::err_of;
using namespace std::chrono_literals;

namespace {

// A text whose message estimate is exactly `tokens`.
std::string text_of(int64_t tokens, char c = 'a') {
  return std::string(static_cast<size_t>((tokens - message_overhead_tokens) * 4), c);
}

// The runtime's clock moves by hand (idle eviction); sweeps only when a test asks.
struct runtime_fixture : serve_runtime_fixture {
  runtime_fixture() { use_manual_clock(); }

  // A stored session under `key` with a system prompt and `n` alternating rows of
  // `tokens` each, row i starting with "i ".
  std::string seed(const std::string& key, int n, int64_t tokens) {
    return serve_runtime_fixture::seed(
      key, n, [tokens](int i) { return std::to_string(i) + " " + text_of(tokens - 2); });
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(runtime_integration, runtime_fixture)

BOOST_AUTO_TEST_CASE(a_first_message_opens_a_session_and_the_fake_model_answers) {
  start();
  auto r = say_to("chat-1", "Hello there, what is mneme?");
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_TEST(!r->answer.empty());
  BOOST_TEST(r->prompt_tokens > 0);
  auto rows = stored_live(r->session_id);
  BOOST_REQUIRE(rows.size() == 3u);
  BOOST_TEST(rows[0].role == msg_role::system);
  BOOST_TEST(rows[1].content == "Hello there, what is mneme?");
  BOOST_TEST(rows[2].content == r->answer);
  auto again = say_to("chat-1", "and again");
  BOOST_REQUIRE(again);
  BOOST_TEST(again->session_id == r->session_id);
  BOOST_TEST(again->live_messages == 5);
}

// Section 9 of the compaction design document: 800 messages, usage 110,000 over a
// threshold configured to 100,000 -> head 3 + summary + tail 20 live.
BOOST_AUTO_TEST_CASE(the_worked_example_keeps_head_3_summary_and_tail_20) {
  rc.compression.threshold_tokens = 100000;
  start();
  auto sid = seed("worked", 799, 139); // with the system prompt: 800 messages, ~110,000
  auto before = stored_stats(sid);
  BOOST_TEST(before.live_rows == 800);
  BOOST_TEST(before.live_token_estimate >= 110000);
  auto r = say_to("worked", "what did we decide?");
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_REQUIRE(r->compactions.size() == 1u);
  BOOST_TEST(r->compactions[0].committed);
  BOOST_TEST(!r->compactions[0].used_fallback);
  auto rows = stored_live(sid);
  // system + head 3 + summary + tail 20 (the new question is its last row) + the answer
  BOOST_REQUIRE(rows.size() == 1u + 3u + 1u + 20u + 1u);
  BOOST_TEST(rows[0].role == msg_role::system);
  BOOST_TEST(rows[1].content.rfind("0 ", 0) == 0u);
  BOOST_TEST(rows[3].content.rfind("2 ", 0) == 0u);
  BOOST_TEST(rows[4].is_summary);
  BOOST_TEST(rows[5].content.rfind("780 ", 0) == 0u);
  BOOST_TEST(rows[24].content == "what did we decide?");
  auto after = stored_stats(sid);
  BOOST_TEST(after.archived_rows == 799 - 3 - 19);
  BOOST_TEST(after.rolled_back_rows == 0);
  // Every original row is still stored, archived ones included.
  auto all = all_rows(sid);
  std::set<std::string> prefixes;
  for (const auto& m : all)
    if (m.role != msg_role::system && !m.is_summary)
      prefixes.insert(m.content.substr(0, m.content.find(' ')));
  for (int i = 0; i < 799; ++i)
    BOOST_TEST_REQUIRE(prefixes.count(std::to_string(i)) == 1u);
  BOOST_TEST(after.live_token_estimate < 100000);
}

BOOST_AUTO_TEST_CASE(a_413_from_the_model_compacts_through_t6_and_the_retry_is_answered) {
  start();
  auto sid = seed("t6", 40, 50);
  faults({rule(fakellm::fault_kind::payload_too_large, fakellm::purpose_filter::chat, 1)});
  auto r = say_to("t6", "go");
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_REQUIRE(r->compactions.size() == 1u);
  BOOST_TEST(r->compactions[0].by == trigger::t6_payload_too_large);
  BOOST_TEST(!r->answer.empty());
  BOOST_TEST(stored_stats(sid).summary_rows == 1);
}

BOOST_AUTO_TEST_CASE(a_long_context_429_compacts_through_t7_and_caps_the_window) {
  rc.model.context_length = 1'000'000;
  start();
  seed("t7", 40, 50);
  faults({rule(fakellm::fault_kind::long_context_429, fakellm::purpose_filter::chat, 1)});
  auto r = say_to("t7", "go");
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_REQUIRE(!r->compactions.empty());
  BOOST_TEST(r->compactions[0].by == trigger::t7_long_context_rate_limit);
  auto s = snapshot("t7");
  BOOST_TEST(s.context_window == 200000);
  BOOST_TEST(s.threshold_tokens == 150000);
}

BOOST_AUTO_TEST_CASE(a_context_overflow_400_compacts_through_t9) {
  start();
  seed("t9", 40, 50);
  faults({rule(fakellm::fault_kind::overflow_400, fakellm::purpose_filter::chat, 1)});
  auto r = say_to("t9", "go");
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_REQUIRE(!r->compactions.empty());
  BOOST_TEST(r->compactions[0].by == trigger::t9_context_overflow);
}

BOOST_AUTO_TEST_CASE(the_summarizer_down_leaves_a_local_fallback_summary_and_a_cooldown) {
  start();
  auto sid = seed("fallback", 60, 50);
  faults({rule(fakellm::fault_kind::unavailable, fakellm::purpose_filter::summary)});
  auto r = call<compaction_report>(rt->gateway(), gw_command_atom_v, std::string{"fallback"},
                                   trigger::t12_manual_session, std::string{});
  // The gateway resolves a key it has not hosted yet from the store.
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_TEST(r->committed);
  BOOST_TEST(r->summary_failed);
  BOOST_TEST(r->used_fallback);
  auto s = snapshot("fallback");
  BOOST_TEST(compactions_of(s, trigger::t12_manual_session) == 1);
  BOOST_TEST(s.record.triggers.cooldown_until_ms > 0);
  BOOST_TEST(s.record.triggers.fallback_streak == 1);
  auto rows = stored_live(sid);
  BOOST_TEST(rows[4].content.find("Local fallback summary") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_gateway_hygiene_check_fires_t4_at_85_percent_of_the_window) {
  rc.model.context_length = 100000; // T4 at 85,000; threshold 75,000
  rc.compression.hygiene_hard_message_limit = 0;
  start();
  seed("t4", 60, 1450); // ~87,000 tokens
  auto r = say_to("t4", "next");
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  auto s = snapshot("t4");
  // The gateway compacted before the turn; the session then stood under T1's threshold.
  // The turn's reply lists the hygiene compaction, and nothing of its own.
  BOOST_TEST(compactions_of(s, trigger::t4_hygiene_tokens) == 1);
  BOOST_TEST(compactions_of(s, trigger::t1_pre_call) == 0);
  BOOST_REQUIRE_EQUAL(r->compactions.size(), 1u);
  BOOST_TEST(r->compactions[0].by == trigger::t4_hygiene_tokens);
  BOOST_TEST(r->compactions[0].committed);
}

BOOST_AUTO_TEST_CASE(channel_commands_compress_roll_back_and_search) {
  start();
  auto sid = seed("cmd", 60, 50);
  auto first = say_to("cmd", "hello");
  BOOST_REQUIRE(first);
  auto ckpt = call<checkpoint_record>(rt->storage(), st_checkpoint_atom_v, sid,
                                      std::string{"before"}, int64_t{system_clock_ms()});
  BOOST_REQUIRE_MESSAGE(ckpt, err_of(ckpt));
  BOOST_REQUIRE(say_to("cmd", "one more"));
  auto compressed = say_to("cmd", "/compress the budget numbers");
  BOOST_REQUIRE_MESSAGE(compressed, err_of(compressed));
  BOOST_REQUIRE(compressed->compactions.size() == 1u);
  BOOST_TEST(compressed->compactions[0].by == trigger::t14_channel_command);
  BOOST_TEST(compressed->notice.find("Compacted") == 0u);
  auto rolled = say_to("cmd", "/rollback before");
  BOOST_REQUIRE_MESSAGE(rolled, err_of(rolled));
  BOOST_TEST(rolled->notice.find("before") != std::string::npos);
  BOOST_TEST(stored_stats(sid).rolled_back_rows > 0);
  auto after = say_to("cmd", "after the rollback");
  BOOST_REQUIRE_MESSAGE(after, err_of(after));
  BOOST_TEST(after->live_messages == rolled->live_messages + 2);
  // /search answers from recall over the user's sessions, fresh rows included.
  auto search = say_to("cmd", "/search rollback");
  BOOST_REQUIRE_MESSAGE(search, err_of(search));
  BOOST_TEST(search->notice.find("Found 1 session") == 0u);
  BOOST_TEST(search->notice.find(">>>rollback<<<") != std::string::npos);
  BOOST_TEST(search->live_messages == 0); // the command does not touch the transcript
  auto none = say_to("cmd", "/search zyxwvut");
  BOOST_REQUIRE_MESSAGE(none, err_of(none));
  BOOST_TEST(none->notice.find("Found 0 sessions") == 0u);
  auto empty = say_to("cmd", "/search");
  BOOST_REQUIRE(!empty);
}

BOOST_AUTO_TEST_CASE(an_idle_session_is_evicted_and_rehydrates_on_the_next_message) {
  rc.gateway.idle_evict_seconds = 600;
  start();
  auto r = say_to("idle", "remember the number 42");
  BOOST_REQUIRE(r);
  auto stats_of = [&] { return *call<supervisor_stats>(rt->supervisor(), sv_stats_atom_v); };
  BOOST_TEST(stats_of().hosted == 1);
  *clock += 599'000;
  // A sweep asked for answers once every session it asked to leave has answered: 0
  // proves it ran and found none idle long enough.
  auto none = call<int64_t>(rt->gateway(), gw_evict_atom_v);
  BOOST_REQUIRE_MESSAGE(none, err_of(none));
  BOOST_TEST(*none == 0);
  BOOST_TEST(stats_of().hosted == 1); // not idle long enough
  *clock += 1'000;
  auto evicted = call<int64_t>(rt->gateway(), gw_evict_atom_v);
  BOOST_REQUIRE_MESSAGE(evicted, err_of(evicted));
  BOOST_TEST(*evicted == 1);
  // The supervisor counts the actor gone when its down message arrives (the deadline
  // bounds a hang; the verdict is the count).
  for (int i = 0; i < 200 && stats_of().hosted != 0; ++i)
    std::this_thread::sleep_for(10ms);
  BOOST_TEST(stats_of().hosted == 0);
  auto back = say_to("idle", "what was the number?");
  BOOST_REQUIRE_MESSAGE(back, err_of(back));
  BOOST_TEST(back->session_id == r->session_id);
  BOOST_TEST(back->live_messages == 5);
  BOOST_TEST(stats_of().spawned == 2);
}

BOOST_AUTO_TEST_CASE(exhaustion_resets_the_session_under_the_same_key_and_keeps_every_row) {
  rc.gateway.replay_after_reset = false; // one exhaustion, the reset's reply as an error
  start();
  auto old_sid = seed("spent", 60, 50);
  BOOST_REQUIRE(say_to("spent", "hello"));
  auto old_rows = all_rows(old_sid).size();
  faults({rule(fakellm::fault_kind::overflow_400, fakellm::purpose_filter::chat)});
  auto r = exhausted_turn("spent", "one more");
  BOOST_TEST(r.notice.find("please send it again") != std::string::npos);
  BOOST_TEST(r.session_id != old_sid);
  auto sv = call<supervisor_stats>(rt->supervisor(), sv_stats_atom_v);
  BOOST_TEST(sv->exhausted == 1);
  auto old = call<session_record>(rt->storage(), st_session_atom_v, old_sid);
  BOOST_TEST(old->ended_at_ms > 0);
  auto fresh = call<session_record>(rt->storage(), st_session_atom_v, r.session_id);
  BOOST_TEST(fresh->session_key == "spent");
  BOOST_TEST(fresh->parent_id == old_sid);
  // New live context: the head and the latest summary.
  auto rows = stored_live(r.session_id);
  BOOST_TEST(rows.size() <= 1u + 3u + 1u);
  bool has_summary = false;
  for (const auto& m : rows)
    has_summary = has_summary || m.is_summary;
  BOOST_TEST(has_summary);
  BOOST_TEST(all_rows(old_sid).size() >= old_rows); // nothing deleted
  llm.clear_faults();
  auto next = say_to("spent", "fresh start");
  BOOST_REQUIRE_MESSAGE(next, err_of(next));
  BOOST_TEST(next->session_id == r.session_id);
}

// A tool output the model refuses as too large (413) sits in the protected head, where
// no compaction reaches it and every reset would copy it again: before exhaustion the
// session evicts it, read or not, and the retried call is answered in the same session.
BOOST_AUTO_TEST_CASE(a_refused_tool_output_in_the_head_is_evicted_instead_of_a_reset_loop) {
  start();
  BOOST_REQUIRE(say_to("huge", "hello"));  // system, user, answer
  message call_row;
  call_row.role = msg_role::assistant;
  call_row.tool_calls.push_back(tool_call{"c1", "run_query", "{}"});
  message output;
  output.role = msg_role::tool;
  output.tool_call_id = "c1";
  output.tool_name = "run_query";
  output.content = std::string(150000, 'r');  // the head's third row and its answer
  for (const auto& m : {call_row, output}) {
    auto id = call<int64_t>(rt->gateway(), gw_append_atom_v, std::string{"huge"},
                            std::string{"u"}, m);
    BOOST_REQUIRE_MESSAGE(id, err_of(id));
  }
  auto sid = snapshot("huge").record.id;
  auto too_large = rule(fakellm::fault_kind::payload_too_large, fakellm::purpose_filter::chat);
  too_large.max_body_bytes = 100000;  // refuses only a request carrying the output
  faults({too_large});

  auto r = say_to("huge", "what did the query return?");
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_TEST(r->notice.empty());  // not the reset notice
  BOOST_TEST(r->session_id == sid);
  BOOST_TEST(!r->answer.empty());
  BOOST_TEST(call<supervisor_stats>(rt->supervisor(), sv_stats_atom_v)->exhausted == 0);
  BOOST_TEST(llm.stats().injected_of(fakellm::fault_kind::payload_too_large) >= 1);
  auto rows = stored_live(sid);
  auto evicted = std::find_if(rows.begin(), rows.end(),
                              [](const message& m) { return m.role == msg_role::tool; });
  BOOST_REQUIRE((evicted != rows.end()));
  BOOST_TEST(evicted->content == eviction_marker(150000));
  BOOST_TEST(evicted->tool_call_id == "c1");
  // The original stays stored, and the next turn is answered in the same session.
  auto all = all_rows(sid);
  BOOST_TEST(std::count_if(all.begin(), all.end(), [](const message& m) {
               return m.content == std::string(150000, 'r');
             }) == 1);
  auto next = say_to("huge", "and now?");
  BOOST_REQUIRE_MESSAGE(next, err_of(next));
  BOOST_TEST(next->session_id == sid);
  BOOST_TEST(next->notice.empty());
}

BOOST_AUTO_TEST_CASE(a_session_killed_mid_compaction_is_restarted_from_the_store) {
  start();
  auto sid = seed("crash", 60, 50);
  fakellm::fault_rule slow = rule(fakellm::fault_kind::latency, fakellm::purpose_filter::summary);
  slow.latency_ms = 2000;
  faults({slow});
  caf::scoped_actor gw{*sys};
  // The scoped actor stands in for the gateway: it receives the supervisor's notices.
  caf::anon_send(rt->supervisor(), sv_gateway_atom_v,
                 caf::actor_cast<supervisor_gateway_actor>(gw));
  auto handle = call<session_actor>(rt->supervisor(), sv_spawn_atom_v, sid);
  BOOST_REQUIRE(handle);
  auto session = *handle;
  BOOST_REQUIRE(call<session_snapshot>(session, ss_state_atom_v));
  caf::anon_send(session, ss_compact_atom_v, trigger::t12_manual_session, std::string{});
  for (int i = 0; i < 100; ++i) {
    auto s = call<session_snapshot>(session, ss_state_atom_v);
    if (s && s->compaction_in_flight)
      break;
    std::this_thread::sleep_for(5ms);
  }
  caf::anon_send_exit(session, caf::exit_reason::kill);
  std::string rebound;
  session_actor restarted;
  gw->receive([&](gw_rebind_atom, std::string& id, session_actor& a) {
                rebound = id;
                restarted = a;
              },
              caf::after(10s) >> [] {});
  BOOST_TEST(rebound == sid);
  BOOST_REQUIRE(restarted);
  auto s = call<session_snapshot>(restarted, ss_state_atom_v);
  BOOST_REQUIRE_MESSAGE(s, err_of(s));
  // The interrupted compaction never committed: the store and the new actor agree.
  BOOST_TEST(s->live_messages == 61);
  BOOST_TEST(stored_stats(sid).summary_rows == 0);
  BOOST_TEST(call<supervisor_stats>(rt->supervisor(), sv_stats_atom_v)->restarts == 1);
  caf::anon_send_exit(restarted, caf::exit_reason::user_shutdown);
}

// SPEC §5.4: the API down, so no usage numbers; T3 counts rows locally and the local
// fallback summary compacts without the summarizer.
BOOST_AUTO_TEST_CASE(the_death_spiral_stays_bounded_with_chat_and_summarizer_down) {
  start();
  faults({rule(fakellm::fault_kind::unavailable, fakellm::purpose_filter::any)});
  // Inbound messages arrive in bursts of 32 (the session queues them in order).
  std::string sid;
  int failed_turns = 0;
  caf::scoped_actor self{*sys};
  for (int burst = 0; burst < 6000 / 32 + 1; ++burst) {
    int n = std::min(32, 6000 - burst * 32);
    for (int i = 0; i < n; ++i)
      self->send(rt->gateway(), gw_message_atom_v, std::string{"spiral"},
                    std::string{"u"}, "message " + std::to_string(burst * 32 + i));
    for (int i = 0; i < n; ++i) {
      bool got = false;
      self->receive([&](turn_reply&) { got = true; },
                    [&](caf::error& e) {
                      got = true;
                      ++failed_turns;
                      BOOST_TEST_REQUIRE(static_cast<errc>(e.code())
                                         == errc::llm_server_error, render_error(e));
                    },
                    caf::after(call_timeout) >> [] {});
      BOOST_TEST_REQUIRE(got, "no answer in burst " << burst);
    }
  }
  BOOST_TEST(failed_turns == 6000);
  auto s = snapshot("spiral");
  sid = s.record.id;
  BOOST_TEST(compactions_of(s, trigger::t3_hygiene_message_cap) >= 1);
  BOOST_TEST(s.live_messages <= 5000);
  BOOST_TEST(s.record.triggers.fallback_streak >= 1);
  // Every message is stored, archived or live.
  auto all = all_rows(sid);
  std::set<std::string> texts;
  for (const auto& m : all)
    if (m.role == msg_role::user && !m.is_summary)
      texts.insert(m.content);
  BOOST_TEST(texts.size() == 6000u);
  BOOST_TEST(stored_stats(sid).archived_rows >= 5000 - 1 - 3 - 20);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE_END() // runtime_integration_test
