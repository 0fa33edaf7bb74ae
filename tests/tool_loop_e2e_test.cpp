// End to end, agent turns over HTTP (issue 29 items 1-3, 5): the daemon's API in process
// against the fake LLM answering like an agent model (every answer to a request offering
// tools calls them, for `tool_rounds` rounds, then a text that quotes the results). A
// three-round loop with its rows stored in order and paired; every refused tool_results
// (nothing stored); the round cap; abandon_pending; a compaction between rounds (T1) and
// after a calling answer (T2) that keeps the pending call whole; the tools of a key
// surviving a restart. Asserted on replies and stored rows, never on timing.
#include <boost/test/unit_test.hpp>

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "actors/runtime.hpp"
#include "policies/token_estimate.hpp"
#include "policies/tool_loop.hpp"
#include "tests/http_api_fixture.hpp"

BOOST_AUTO_TEST_SUITE(tool_loop_e2e_test)

using namespace mneme;
using json = nlohmann::json;

namespace {

// One tool with required string and integer arguments and an optional flag.
json weather_tool(const std::string& description = "Weather of a city") {
  return json::parse(R"({"type":"function","function":{"name":"get_weather","description":)"
                     + json(description).dump()
                     + R"(,"parameters":{"type":"object","properties":{"city":{"type":"string"},
                        "days":{"type":"integer","minimum":2},"unit":{"type":"string",
                        "enum":["c","f"]},"verbose":{"type":"boolean"}},
                        "required":["city","days","unit"]}}})");
}

json two_tools() {
  return json::array({weather_tool(),
                      json::parse(R"({"type":"function","function":{"name":"read_file",
                        "parameters":{"type":"object","properties":{"path":{"type":"string"}},
                        "required":["path"]}}})")});
}

// Text of about `tokens` tokens.
std::string loop_text(const std::string& tag, int64_t tokens) {
  std::string s = tag + " ";
  while (estimate_text_tokens(s) < tokens)
    s += "the build log shows a warning in module " + tag + " ";
  return s;
}

struct loop_fixture : test::http_api_fixture {
  // The fake calls tools on every answer to a request offering them, `rounds` times per
  // user message.
  void agent_model(int64_t rounds) {
    fakellm::scenario s;
    s.plan.seed = 29;
    s.tool_call_fraction = 1.0;
    s.tool_rounds = rounds;
    BOOST_REQUIRE(!llm.set_scenario(std::move(s)));
  }

  answer turn(const std::string& key, json body) {
    body["user"] = "u";
    return post("/v1/sessions/" + key + "/turns", body);
  }

  // The results of every call of a reply, each saying "result of <id>".
  static json results_for(const json& reply) {
    auto out = json::array();
    for (const auto& c : reply["tool_calls"])
      out.push_back({{"tool_call_id", c["id"]}, {"content", "result of " + c["id"].get<std::string>()}});
    return out;
  }

  size_t stored_rows(const std::string& session_id) { return all_rows(session_id).size(); }
};

// Every tool row answers a call of the nearest assistant row with calls before it, and
// every call of such a row is answered before the next non-tool row (the last row's
// calls may still be pending).
void check_paired(const std::vector<message>& rows) {
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].has_tool_calls())
      continue;
    std::set<std::string> calls;
    for (const auto& c : rows[i].tool_calls)
      calls.insert(c.id);
    size_t j = i + 1;
    for (; j < rows.size() && rows[j].role == msg_role::tool; ++j)
      BOOST_TEST(calls.erase(rows[j].tool_call_id) == 1u, "row " << j << " answers no call");
    if (j < rows.size()) // else the calls are pending: their results may still come
      BOOST_TEST(calls.empty(), "row " << i << " has unanswered calls");
  }
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(tool_loop_e2e, loop_fixture)

BOOST_AUTO_TEST_CASE(a_three_round_tool_loop_stores_every_row_in_order_with_its_ids_paired) {
  serve();
  agent_model(3);
  auto r = turn("agent", {{"content", "plan my trip"}, {"tools", two_tools()},
                          {"temperature", 0.2}, {"max_tokens", 500}});
  BOOST_REQUIRE_MESSAGE(r.status == 200, r.text);
  const auto sid = r.body["session_id"].get<std::string>();
  std::vector<std::string> call_ids;
  for (int round = 1; round <= 3; ++round) {
    BOOST_TEST_CONTEXT("round " << round) {
      BOOST_REQUIRE(r.body["finish_reason"] == "tool_calls");
      BOOST_REQUIRE(!r.body["tool_calls"].empty());
      for (const auto& c : r.body["tool_calls"]) {
        call_ids.push_back(c["id"].get<std::string>());
        auto args = json::parse(c["arguments"].get<std::string>());
        if (c["name"] == "get_weather") { // every required property, filled by its type
          BOOST_TEST(args["city"].is_string());
          BOOST_TEST(args["days"] == 2);
          BOOST_TEST(args["unit"] == "c");
          BOOST_TEST(!args.contains("verbose"));
        } else {
          BOOST_TEST(c["name"] == "read_file");
          BOOST_TEST(args["path"].is_string());
        }
      }
      r = turn("agent", {{"tool_results", results_for(r.body)}});
      BOOST_REQUIRE_MESSAGE(r.status == 200, r.text);
    }
  }
  BOOST_TEST(r.body["finish_reason"] == "stop");
  BOOST_TEST(r.body["tool_calls"].empty());
  auto answer = r.body["answer"].get<std::string>();
  BOOST_TEST(answer.find("Tool results: ") == 0u, answer);
  BOOST_TEST(answer.find("result of " + call_ids.back()) != std::string::npos, answer);

  auto rows = all_rows(sid);
  std::vector<msg_role> roles;
  for (const auto& m : rows)
    roles.push_back(m.role);
  // system, user, then three rounds of (assistant calls, its results), the text answer.
  BOOST_REQUIRE(rows.size() == 2 + call_ids.size() + 3 + 1);
  BOOST_TEST((roles[0] == msg_role::system));
  BOOST_TEST((roles[1] == msg_role::user));
  BOOST_TEST(rows[1].content == "plan my trip");
  size_t calls_seen = 0;
  for (size_t i = 2; i + 1 < rows.size(); ++i)
    if (rows[i].has_tool_calls())
      for (const auto& c : rows[i].tool_calls)
        BOOST_TEST(c.id == call_ids[calls_seen++]);
  BOOST_TEST(calls_seen == call_ids.size());
  BOOST_TEST((roles.back() == msg_role::assistant));
  BOOST_TEST(rows.back().content == answer);
  for (size_t i = 1; i < rows.size(); ++i)
    BOOST_TEST(rows[i].id > rows[i - 1].id);
  check_paired(rows);
}

BOOST_AUTO_TEST_CASE(every_bad_tool_results_is_refused_with_400_naming_it_and_stores_nothing) {
  serve();
  agent_model(3);
  auto r = turn("bad", {{"content", "go"}, {"tools", json::array({weather_tool()})}});
  BOOST_REQUIRE_MESSAGE(r.status == 200, r.text);
  const auto sid = r.body["session_id"].get<std::string>();
  BOOST_REQUIRE(r.body["tool_calls"].size() == 1u);
  const auto id = r.body["tool_calls"][0]["id"].get<std::string>();
  const auto before = stored_rows(sid);
  struct bad_case {
    json results;
    std::string says;
  };
  std::vector<bad_case> cases{
    {json::array({{{"tool_call_id", "nope"}, {"content", "x"}}}), "unknown tool call id 'nope'"},
    {json::array({{{"tool_call_id", id}, {"content", "x"}}, {{"tool_call_id", id}, {"content", "y"}}}),
     "duplicate result for tool call '" + id + "'"},
  };
  for (const auto& c : cases) {
    auto a = turn("bad", {{"tool_results", c.results}});
    BOOST_TEST(a.status == 400, a.text);
    BOOST_TEST(a.body["error"]["code"] == "bad_request");
    BOOST_TEST(a.body["error"]["message"].get<std::string>().find(c.says) != std::string::npos,
               a.text);
    BOOST_TEST(stored_rows(sid) == before);
  }
  auto done = turn("bad", {{"tool_results", results_for(r.body)}});
  BOOST_REQUIRE_MESSAGE(done.status == 200, done.text);
  // No pending calls: finish the loop with text, then send a result again.
  while (done.body["finish_reason"] == "tool_calls") {
    done = turn("bad", {{"tool_results", results_for(done.body)}});
    BOOST_REQUIRE_MESSAGE(done.status == 200, done.text);
  }
  const auto after_loop = stored_rows(sid);
  auto a = turn("bad", {{"tool_results", json::array({{{"tool_call_id", id}, {"content", "late"}}})}});
  BOOST_TEST(a.status == 400, a.text);
  BOOST_TEST(a.body["error"]["message"].get<std::string>().find("no tool call is waiting")
               != std::string::npos,
             a.text);
  BOOST_TEST(stored_rows(sid) == after_loop);
}

BOOST_AUTO_TEST_CASE(a_partial_set_of_results_names_the_missing_call) {
  serve();
  // Seeded so that the fake picks two tools in parallel: search seeds until it does.
  fakellm::scenario s;
  s.tool_call_fraction = 1.0;
  s.tool_rounds = 1;
  answer r;
  for (uint64_t seed = 1; seed < 200; ++seed) {
    s.plan.seed = seed;
    BOOST_REQUIRE(!llm.set_scenario(s));
    r = turn("par-" + std::to_string(seed), {{"content", "go"}, {"tools", two_tools()}});
    BOOST_REQUIRE_MESSAGE(r.status == 200, r.text);
    if (r.body["tool_calls"].size() == 2u) {
      const auto key = "par-" + std::to_string(seed);
      const auto sid = r.body["session_id"].get<std::string>();
      const auto before = stored_rows(sid);
      auto a = turn(key, {{"tool_results", json::array({results_for(r.body)[1]})}});
      BOOST_TEST(a.status == 400, a.text);
      auto missing = r.body["tool_calls"][0]["id"].get<std::string>();
      BOOST_TEST(a.body["error"]["message"].get<std::string>()
                 == "field 'tool_results': missing the result of tool call '" + missing + "'");
      BOOST_TEST(stored_rows(sid) == before);
      auto ok = turn(key, {{"tool_results", results_for(r.body)}}); // both, reversed order ok
      BOOST_TEST(ok.status == 200, ok.text);
      BOOST_TEST(ok.body["finish_reason"] == "stop");
      return;
    }
  }
  BOOST_FAIL("the fake never called two tools in parallel");
}

BOOST_AUTO_TEST_CASE(the_loop_ends_with_tool_round_cap_after_max_tool_rounds_and_keeps_the_results) {
  rc.gateway.max_tool_rounds = 2;
  serve();
  agent_model(100); // the model never stops calling
  auto r = turn("cap", {{"content", "loop forever"}, {"tools", json::array({weather_tool()})}});
  BOOST_REQUIRE_MESSAGE(r.status == 200, r.text);
  const auto sid = r.body["session_id"].get<std::string>();
  r = turn("cap", {{"tool_results", results_for(r.body)}}); // round 2
  BOOST_REQUIRE_MESSAGE(r.status == 200, r.text);
  BOOST_REQUIRE(r.body["finish_reason"] == "tool_calls");
  auto last_call = r.body["tool_calls"][0]["id"].get<std::string>();
  auto capped = turn("cap", {{"tool_results", results_for(r.body)}});
  BOOST_TEST(capped.status == 409, capped.text);
  BOOST_TEST(capped.body["error"]["code"] == "tool_round_cap");
  auto rows = all_rows(sid);
  BOOST_TEST((rows.back().role == msg_role::tool));
  BOOST_TEST(rows.back().tool_call_id == last_call); // the results are stored
  check_paired(rows);
  // Nothing is pending: the next user turn needs no abandon_pending.
  auto next = turn("cap", {{"content", "something else"}, {"tools", json::array()}});
  BOOST_TEST(next.status == 200, next.text);
  BOOST_TEST(next.body["finish_reason"] == "stop"); // tools cleared: a text answer
}

BOOST_AUTO_TEST_CASE(a_user_turn_while_calls_wait_is_refused_unless_it_abandons_them) {
  serve();
  agent_model(3);
  auto r = turn("ab", {{"content", "start"}, {"tools", two_tools()}});
  BOOST_REQUIRE_MESSAGE(r.status == 200, r.text);
  const auto sid = r.body["session_id"].get<std::string>();
  const auto before = stored_rows(sid);
  auto refused = turn("ab", {{"content", "never mind"}});
  BOOST_TEST(refused.status == 409, refused.text);
  BOOST_TEST(refused.body["error"]["code"] == "tool_results_pending");
  BOOST_TEST(stored_rows(sid) == before);
  auto moved = turn("ab", {{"content", "never mind"}, {"abandon_pending", true}});
  BOOST_REQUIRE_MESSAGE(moved.status == 200, moved.text);
  auto rows = all_rows(sid);
  const auto calls = r.body["tool_calls"].size();
  BOOST_REQUIRE(rows.size() >= before + calls + 1);
  for (size_t k = 0; k < calls; ++k) {
    const auto& stub = rows[before + k];
    BOOST_TEST((stub.role == msg_role::tool));
    BOOST_TEST(stub.tool_call_id == r.body["tool_calls"][k]["id"].get<std::string>());
    BOOST_TEST(stub.content == std::string{abandoned_call_result});
  }
  BOOST_TEST(rows[before + calls].content == "never mind");
  check_paired(rows);
}

BOOST_AUTO_TEST_CASE(the_tools_of_a_key_survive_a_restart_and_the_loop_continues) {
  serve();
  agent_model(3);
  auto r = turn("keep", {{"content", "start"}, {"tools", json::array({weather_tool()})}});
  BOOST_REQUIRE_MESSAGE(r.status == 200, r.text);
  BOOST_REQUIRE(r.body["finish_reason"] == "tool_calls");
  server->begin_shutdown();
  server->join();
  server.reset();
  restart(); // a new process on the same file: the session rehydrates from the store
  // The pending call is read from the stored rows, the tools from the key's row.
  turn_input in;
  for (const auto& c : r.body["tool_calls"])
    in.tool_results.push_back(tool_result_input{c["id"].get<std::string>(), "sunny", false});
  auto next = call<turn_reply>(rt->gateway(), gw_turn_atom_v, stored_key("u", "keep"),
                               std::string{"u"}, in); // the key as the API stored it
  BOOST_REQUIRE_MESSAGE(next, testing::err_of(next));
  BOOST_TEST(next->finish_reason == "tool_calls"); // the tools were offered again
  BOOST_REQUIRE(!next->tool_calls.empty());
  BOOST_TEST(next->tool_calls[0].name == "get_weather");
}

BOOST_AUTO_TEST_CASE(a_compaction_between_rounds_keeps_the_loop_and_its_pending_call_whole) {
  rc.model.context_length = 16000;
  rc.compression.protect_last_n = 4;
  serve();
  agent_model(3);
  // A session just under its threshold, then a loop whose results push it over (T1).
  const auto threshold = [&] {
    auto first = turn("t1", {{"content", "hello"}});
    BOOST_REQUIRE_MESSAGE(first.status == 200, first.text);
    return snapshot("t1").threshold_tokens;
  }();
  for (int i = 0; i < 8; ++i) {
    auto a = turn("t1", {{"content", loop_text("m" + std::to_string(i), threshold / 12)}});
    BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  }
  auto r = turn("t1", {{"content", "now use the tool"}, {"tools", json::array({weather_tool()})}});
  BOOST_REQUIRE_MESSAGE(r.status == 200, r.text);
  BOOST_REQUIRE(r.body["finish_reason"] == "tool_calls");
  auto big = json::array();
  for (const auto& c : r.body["tool_calls"])
    big.push_back({{"tool_call_id", c["id"]}, {"content", loop_text("out", threshold / 3)}});
  auto next = turn("t1", {{"tool_results", big}});
  BOOST_REQUIRE_MESSAGE(next.status == 200, next.text);
  bool t1 = false;
  for (const auto& c : next.body["compactions"])
    t1 = t1 || (c["trigger"] == "T1_pre_call" && c["committed"] == true);
  BOOST_TEST(t1, next.text);
  const auto sid = next.body["session_id"].get<std::string>();
  auto live = stored_live(sid);
  // The loop's user message, its call and its results are live, in order.
  size_t user = live.size();
  for (size_t i = 0; i < live.size(); ++i)
    if (live[i].content == "now use the tool")
      user = i;
  BOOST_REQUIRE(user < live.size());
  BOOST_REQUIRE(user + 2 < live.size());
  BOOST_TEST(live[user + 1].has_tool_calls());
  BOOST_TEST((live[user + 2].role == msg_role::tool));
  check_paired(live);
}

BOOST_AUTO_TEST_CASE(a_compaction_after_a_calling_answer_keeps_the_pending_call_answerable) {
  rc.model.context_length = 16000;
  rc.compression.protect_last_n = 4;
  serve();
  agent_model(3);
  auto first = turn("t2", {{"content", "hello"}});
  BOOST_REQUIRE_MESSAGE(first.status == 200, first.text);
  const auto threshold = snapshot("t2").threshold_tokens;
  for (int i = 0; i < 7; ++i) {
    auto a = turn("t2", {{"content", loop_text("m" + std::to_string(i), threshold / 14)}});
    BOOST_REQUIRE_MESSAGE(a.status == 200, a.text);
  }
  // The tool schemas count in the model's usage (not in the local pre-call estimate,
  // and the request still fits the window): the answer reports a prompt over the
  // threshold, so T2 fires after it.
  auto tools = json::array({weather_tool(loop_text("schema", threshold / 2))});
  auto r = turn("t2", {{"content", "use the tool"}, {"tools", tools}});
  BOOST_REQUIRE_MESSAGE(r.status == 200, r.text);
  BOOST_REQUIRE(r.body["finish_reason"] == "tool_calls");
  bool t2 = false;
  for (const auto& c : r.body["compactions"])
    t2 = t2 || (c["trigger"] == "T2_post_call" && c["committed"] == true);
  BOOST_TEST(t2, r.text);
  const auto sid = r.body["session_id"].get<std::string>();
  auto live = stored_live(sid);
  BOOST_REQUIRE(live.size() >= 2u);
  BOOST_TEST(live.back().has_tool_calls()); // the pending call is live, last
  BOOST_TEST(live[live.size() - 2].content == "use the tool");
  auto next = turn("t2", {{"tool_results", results_for(r.body)}});
  BOOST_TEST(next.status == 200, next.text);
  check_paired(stored_live(sid));
}

BOOST_AUTO_TEST_CASE(every_agent_field_of_the_wrong_type_is_a_400_naming_it_and_stores_nothing) {
  serve();
  auto ok = turn("fields", {{"content", "hi"}});
  BOOST_REQUIRE_MESSAGE(ok.status == 200, ok.text);
  const auto sid = ok.body["session_id"].get<std::string>();
  const auto before = stored_rows(sid);
  struct field_case {
    const char* body;
    const char* names;
  };
  const std::vector<field_case> cases{
    {R"({"content":"x","tools":{}})", "field 'tools' must be an array"},
    {R"({"content":"x","tools":[1]})", "field 'tools[0]' must be an object"},
    {R"({"content":"x","tools":[{"type":"code","function":{"name":"f"}}]})", "'tools[0].type'"},
    {R"({"content":"x","tools":[{"type":"function"}]})", "'tools[0].function'"},
    {R"({"content":"x","tools":[{"type":"function","function":{"name":3}}]})",
     "'tools[0].function.name' must be a string"},
    {R"({"content":"x","tools":[{"type":"function","function":{"name":"f","parameters":[]}}]})",
     "'tools[0].function.parameters' must be an object"},
    {R"({"content":"x","tool_choice":"always"})", "field 'tool_choice'"},
    {R"({"content":"x","tool_choice":5})", "field 'tool_choice' must be a string or an object"},
    {R"({"content":"x","temperature":"hot"})", "field 'temperature' must be a number"},
    {R"({"content":"x","temperature":3})", "field 'temperature' must be between"},
    {R"({"content":"x","top_p":1.5})", "field 'top_p' must be between"},
    {R"({"content":"x","max_tokens":1.5})", "field 'max_tokens' must be an integer"},
    {R"({"content":"x","max_tokens":0})", "field 'max_tokens' must be 1 or more"},
    {R"({"content":"x","response_format":"json"})", "field 'response_format' must be an object"},
    {R"({"content":"x","stop":[1]})", "field 'stop[0]' must be a string"},
    {R"({"content":"x","stop":true})", "field 'stop' must be a string or an array"},
    {R"({"content":"x","seed":"7"})", "field 'seed' must be an integer"},
    {R"({"content":"x","parallel_tool_calls":1})", "field 'parallel_tool_calls' must be a boolean"},
    {R"({"content":"x","abandon_pending":"yes"})", "field 'abandon_pending' must be a boolean"},
    {R"({"tool_results":{}})", "field 'tool_results' must be an array"},
    {R"({"tool_results":[]})", "field 'tool_results' is empty"},
    {R"({"tool_results":[{"content":"x"}]})", "missing field 'tool_results[0].tool_call_id'"},
    {R"({"tool_results":[{"tool_call_id":"a"}]})", "missing field 'tool_results[0].content'"},
    {R"({"tool_results":[{"tool_call_id":"a","content":"x","is_error":"no"}]})",
     "field 'tool_results[0].is_error' must be a boolean"},
    {R"({"tool_results":[{"tool_call_id":"","content":"x"}]})",
     "field 'tool_results[0].tool_call_id' is empty"},
    {R"({"content":"x","tool_results":[{"tool_call_id":"a","content":"x"}]})",
     "'content' and 'tool_results' exclude each other"},
    {R"({"tool_results":[{"tool_call_id":"a","content":"x"}],"abandon_pending":true})",
     "field 'abandon_pending' goes with 'content'"},
    {R"({"user":"u"})", "missing field 'content'"},
  };
  for (const auto& c : cases) {
    auto a = post("/v1/sessions/fields/turns", std::string{c.body});
    BOOST_TEST_CONTEXT(c.body) {
      BOOST_TEST(a.status == 400, a.text);
      BOOST_TEST(a.body["error"]["message"].get<std::string>().find(c.names) != std::string::npos,
                 a.text);
    }
  }
  BOOST_TEST(stored_rows(sid) == before);
  // Every field of the right type is accepted.
  auto all = turn("fields", {{"content", "x"}, {"tools", two_tools()}, {"tool_choice", "auto"},
                             {"temperature", 0.5}, {"top_p", 0.9}, {"max_tokens", 256},
                             {"response_format", {{"type", "text"}}}, {"stop", {"END"}},
                             {"seed", 7}, {"parallel_tool_calls", true}});
  BOOST_TEST(all.status == 200, all.text);
}

BOOST_AUTO_TEST_SUITE_END() // tool_loop_e2e

BOOST_AUTO_TEST_SUITE_END() // tool_loop_e2e_test
