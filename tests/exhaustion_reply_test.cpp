// The reply to an exhausted turn (SPEC §5.3, issue 25 item 6), through the gateway and
// the HTTP API against the fake LLM: it lists the compactions the turn tried; the reset
// session re-runs the unanswered message once (gateway.replay_after_reset, the default)
// and answers it; without the re-run, or when the re-run fails too, the answer is an
// error with its code (never a 200 with an empty answer) whose body names the new
// session, lists the compactions and asks to send the message again, quoting it; and
// the compactions the hygiene check ran before a turn lead that turn's reply.
#include <boost/test/unit_test.hpp>

#include <string>

#include "actors/runtime.hpp"
#include "policies/exhaustion_notice.hpp"
#include "tests/http_api_fixture.hpp"

BOOST_AUTO_TEST_SUITE(exhaustion_reply_test)

using namespace mneme;
using namespace mneme::test;
using mneme::testing::err_of;

namespace {

// Three short rows (the head), then rows of about 250 tokens: the 20-row tail alone is
// about 5,000 tokens, a reset session (head + summary) stays far below.
std::string exhausting_row(int i) {
  if (i < 3)
    return "short row " + std::to_string(i);
  std::string s = "row " + std::to_string(i) + " ";
  while (s.size() < 1000)
    s += "the build log of stage " + std::to_string(i) + " repeats ";
  return s;
}

struct exhaustion_fixture : http_api_fixture {
  std::string old_sid;

  // The model refuses as a context overflow every chat prompt of at least `min_tokens`
  // (0: every prompt). The seeded session's tail is over 4,000 tokens, so compaction
  // cannot bring its prompts under that bound and the turn exhausts.
  void refuse_prompts_over(int64_t min_tokens) {
    auto r = rule(fakellm::fault_kind::overflow_400, fakellm::purpose_filter::chat);
    r.min_prompt_tokens = min_tokens;
    faults({r});
  }
  void seed_spent() { old_sid = seed(stored_key("u", "spent"), 60, exhausting_row); }
  bool stored_in(const std::string& sid, const std::string& text) {
    for (const auto& m : all_rows(sid))
      if (m.role == msg_role::user && m.content == text)
        return true;
    return false;
  }
  uint64_t resets() { return rt->metrics()->exhaustion_resets.load(); }
};

} // namespace

BOOST_FIXTURE_TEST_CASE(the_unanswered_message_is_re_run_once_in_the_reset_session,
                        exhaustion_fixture) {
  start();
  seed_spent();
  refuse_prompts_over(4000);
  const std::string text = "one more question about stage 7";
  auto r = say_to(stored_key("u", "spent"), text);
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_TEST(!r->answer.empty());
  BOOST_TEST(r->session_id != old_sid);
  BOOST_TEST(r->notice.find("answered in the new session") != std::string::npos, r->notice);
  BOOST_REQUIRE(r->compactions.size() >= 1u);
  int tried = 0;
  for (const auto& c : r->compactions)
    tried += c.by == trigger::t9_context_overflow ? 1 : 0;
  BOOST_TEST(tried >= 1);
  BOOST_TEST(r->notice.find("(" + std::to_string(tried) + " compaction") != std::string::npos,
             r->notice);
  BOOST_TEST(stored_in(old_sid, text));      // stored where it was asked ...
  BOOST_TEST(stored_in(r->session_id, text)); // ... and re-run in the new session
  BOOST_TEST(resets() == 1u);
  auto next = say_to(stored_key("u", "spent"), "thanks");
  BOOST_REQUIRE_MESSAGE(next, err_of(next));
  BOOST_TEST(next->session_id == r->session_id);
}

BOOST_FIXTURE_TEST_CASE(without_replay_the_answer_is_an_error_asking_to_send_it_again,
                        exhaustion_fixture) {
  rc.gateway.replay_after_reset = false;
  serve();
  seed_spent();
  refuse_prompts_over(4000);
  std::string text = "please look at stage 9: ";
  for (int i = 0; i < 80; ++i) // 344 characters, 824 bytes
    text += "数据库 ";
  auto a = post("/v1/sessions/spent/turns", json{{"user", "u"}, {"content", text}});
  BOOST_TEST(a.status == 409);
  BOOST_TEST(a.body["error"]["code"] == "compaction_exhausted");
  BOOST_TEST(!a.body.contains("answer"));
  auto notice = a.body["notice"].get<std::string>();
  BOOST_TEST(notice.find("please send it again") != std::string::npos, notice);
  BOOST_TEST(notice.find(resend_quote(text)) != std::string::npos);
  BOOST_TEST(resend_quote(text).size() < text.size());
  BOOST_REQUIRE(a.body["compactions"].is_array());
  BOOST_TEST(a.body["compactions"].size() >= 1u);
  auto fresh = a.body["session_id"].get<std::string>();
  BOOST_TEST(fresh != old_sid);
  BOOST_TEST(snapshot("spent").record.id == fresh);
  BOOST_TEST(stored_in(old_sid, text));
  BOOST_TEST(!stored_in(fresh, text));
  BOOST_TEST(resets() == 1u);
}

BOOST_FIXTURE_TEST_CASE(a_re_run_that_fails_too_is_an_error_and_resets_no_further,
                        exhaustion_fixture) {
  start();
  seed_spent();
  refuse_prompts_over(0); // the new session is refused as well
  auto carried = exhausted_turn(stored_key("u", "spent"), "one more");
  BOOST_TEST(carried.notice.find("please send it again: \"one more\"") != std::string::npos);
  BOOST_TEST(carried.compactions.size() >= 1u);
  BOOST_TEST(carried.session_id != old_sid);
  // Both sessions ran out; only the first was reset (re-run once, no reset loop).
  BOOST_TEST(call<supervisor_stats>(rt->supervisor(), sv_stats_atom_v)->exhausted == 2);
  BOOST_TEST(resets() == 1u);
  BOOST_TEST(snapshot("spent").record.id == carried.session_id);
}

BOOST_FIXTURE_TEST_CASE(the_hygiene_compaction_before_a_turn_is_listed_in_its_reply,
                        exhaustion_fixture) {
  rc.compression.hygiene_hard_message_limit = 40;
  start();
  seed(stored_key("u", "capped"), 60, exhausting_row);
  auto r = say_to(stored_key("u", "capped"), "hello");
  BOOST_REQUIRE_MESSAGE(r, err_of(r));
  BOOST_REQUIRE(!r->compactions.empty());
  BOOST_TEST(r->compactions[0].by == trigger::t3_hygiene_message_cap);
  BOOST_TEST(r->compactions[0].committed);
  BOOST_TEST(!r->answer.empty());
}

BOOST_FIXTURE_TEST_CASE(an_exhausted_tool_results_continuation_is_not_re_run,
                        exhaustion_fixture) {
  serve();
  seed_spent();
  fakellm::scenario agent;
  agent.plan.seed = 25;
  agent.tool_call_fraction = 1.0; // every answer to a request offering tools calls them
  BOOST_REQUIRE(!llm.set_scenario(agent));
  auto tool = json::parse(R"({"type":"function","function":{"name":"read_log",
    "parameters":{"type":"object","properties":{"stage":{"type":"integer"}},
    "required":["stage"]}}})");
  auto first = post("/v1/sessions/spent/turns",
                    json{{"user", "u"}, {"content", "read the log of stage 7"},
                         {"tools", json::array({tool})}});
  BOOST_REQUIRE_MESSAGE(first.status == 200, first.body.dump());
  BOOST_REQUIRE(first.body["finish_reason"] == "tool_calls");
  auto results = json::array();
  for (const auto& c : first.body["tool_calls"])
    results.push_back({{"tool_call_id", c["id"]}, {"content", "stage 7 passed"}});
  auto calls_session = first.body["session_id"].get<std::string>();
  // From now on every prompt over 4,000 tokens is refused: the continuation runs out.
  auto r = rule(fakellm::fault_kind::overflow_400, fakellm::purpose_filter::chat);
  r.min_prompt_tokens = 4000;
  agent.plan.rules = {r};
  BOOST_REQUIRE(!llm.set_scenario(agent));
  auto a = post("/v1/sessions/spent/turns", json{{"user", "u"}, {"tool_results", results}});
  BOOST_TEST(a.status == 409);
  BOOST_TEST(a.body["error"]["code"] == "compaction_exhausted");
  auto notice = a.body["notice"].get<std::string>();
  auto carried = "the results of " + std::to_string(results.size()) + " tool call";
  BOOST_TEST(notice.find(carried) != std::string::npos, notice);
  auto fresh = a.body["session_id"].get<std::string>();
  BOOST_TEST(fresh != calls_session);
  // The results stay with their calls in the session that ran out; nothing is re-run.
  int stored_results = 0;
  for (const auto& m : all_rows(calls_session))
    stored_results += m.role == msg_role::tool && m.content == "stage 7 passed" ? 1 : 0;
  BOOST_TEST(stored_results == static_cast<int>(results.size()));
  for (const auto& m : all_rows(fresh))
    BOOST_TEST(m.content != "stage 7 passed");
  BOOST_TEST(resets() == 1u);
}

BOOST_AUTO_TEST_SUITE_END() // exhaustion_reply_test
