// End to end, mneme's built-in tools over HTTP (issue 29 item 7): the fake LLM calls
// session_search, memory and skill_view when the user's words ask for them (rule 0 of
// apps/common/fakellm/fake_tool_calls.hpp); mneme runs the calls inside the turn, stores
// call and result as ordinary rows and calls the model again, which quotes the results.
// Covered: a search that finds another session of the same user and never another
// user's; a fact written then read (and only for its user); a skill loaded for the task
// and unloaded when the loop answered; an answer mixing builtin and client calls (only
// the client's are pending); the round cap counting builtin rounds; a client tool of a
// builtin's name shadowing it. Asserted on replies and stored rows, never on timing.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "actors/runtime.hpp"
#include "policies/skills_index.hpp"
#include "tests/http_api_fixture.hpp"

BOOST_AUTO_TEST_SUITE(builtin_tools_e2e_test)

using namespace mneme;
using json = nlohmann::json;

namespace {

struct builtin_fixture : test::http_api_fixture {
  // Every answer to a request with client tools calls them once per user message.
  void calling_model(double fraction) {
    fakellm::scenario s;
    s.plan.seed = 7;
    s.tool_call_fraction = fraction;
    s.tool_rounds = 1;
    BOOST_REQUIRE(!llm.set_scenario(std::move(s)));
  }
  answer turn_as(const std::string& user, const std::string& key, json body) {
    body["user"] = user;
    return post("/v1/sessions/" + key + "/turns", body);
  }
  answer say(const std::string& user, const std::string& key, const std::string& text) {
    return turn_as(user, key, {{"content", text}});
  }
  // The tool rows of a session, in order.
  std::vector<message> tool_rows(const std::string& sid) {
    std::vector<message> out;
    for (auto& m : all_rows(sid))
      if (m.role == msg_role::tool)
        out.push_back(m);
    return out;
  }
  void write_skill(const std::string& name, const std::string& body) {
    auto folder = dir.file("skills") + "/" + name;
    std::filesystem::create_directories(folder);
    std::ofstream(folder + "/SKILL.md") << "---\nname: " << name
                                        << "\ndescription: how to " << name << "\n---\n"
                                        << body << "\n";
  }
};

json weather_tools() {
  return json::parse(R"([{"type":"function","function":{"name":"get_weather","parameters":
    {"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}])");
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(builtin_tools_e2e, builtin_fixture)

BOOST_AUTO_TEST_CASE(session_search_finds_the_users_earlier_session_and_never_another_users) {
  serve();
  auto mine = say("u", "old-u", "the zebracode41 plan is to ship on friday");
  BOOST_REQUIRE_MESSAGE(mine.status == 200, mine.text);
  auto theirs = say("v", "old-v", "my secret zebracode41 notes for v only");
  BOOST_REQUIRE_MESSAGE(theirs.status == 200, theirs.text);
  const auto mine_id = mine.body["session_id"].get<std::string>();
  const auto theirs_id = theirs.body["session_id"].get<std::string>();

  auto r = say("u", "new-u", "What did we discuss earlier about zebracode41?");
  BOOST_REQUIRE_MESSAGE(r.status == 200, r.text);
  BOOST_TEST(r.body["finish_reason"] == "stop");
  BOOST_TEST(r.body["tool_calls"].empty());
  BOOST_REQUIRE(r.body["builtin_calls"].size() == 1u);
  const auto& b = r.body["builtin_calls"][0];
  BOOST_TEST(b["name"] == "session_search");
  BOOST_TEST(json::parse(b["arguments"].get<std::string>())["query"] == "zebracode41");
  BOOST_TEST(b["result_bytes"].get<int64_t>() > 0);
  auto answer = r.body["answer"].get<std::string>();
  BOOST_TEST(answer.find("Tool results: session_search: Found 1 earlier conversation") == 0u,
             answer);
  BOOST_TEST(answer.find(">>>zebracode41<<<") != std::string::npos, answer);

  // user, the call, its result, the answer: ordinary rows, paired.
  const auto sid = r.body["session_id"].get<std::string>();
  auto rows = all_rows(sid);
  std::vector<msg_role> roles;
  for (const auto& m : rows)
    roles.push_back(m.role);
  std::vector<msg_role> expected{msg_role::system, msg_role::user, msg_role::assistant,
                                 msg_role::tool, msg_role::assistant};
  BOOST_TEST(roles == expected, boost::test_tools::per_element());
  BOOST_REQUIRE(rows.size() == 5u);
  BOOST_REQUIRE(rows[2].tool_calls.size() == 1u);
  BOOST_TEST(rows[3].tool_call_id == rows[2].tool_calls[0].id);
  BOOST_TEST(rows[3].tool_name == "session_search");
  BOOST_TEST(rows[3].content.find(mine_id) != std::string::npos, rows[3].content);
  BOOST_TEST(rows[3].content.find("ship on friday") != std::string::npos, rows[3].content);
  BOOST_TEST(rows[3].content.find(theirs_id) == std::string::npos, rows[3].content);
  BOOST_TEST(rows[3].content.find("notes for v") == std::string::npos, rows[3].content);
  BOOST_TEST(rows[3].content.find(sid) == std::string::npos); // not the asking session

  // v asking the same finds only v's session.
  auto rv = say("v", "new-v", "What did we discuss earlier about zebracode41?");
  BOOST_REQUIRE_MESSAGE(rv.status == 200, rv.text);
  auto vrows = tool_rows(rv.body["session_id"].get<std::string>());
  BOOST_REQUIRE(vrows.size() == 1u);
  BOOST_TEST(vrows[0].content.find(theirs_id) != std::string::npos, vrows[0].content);
  BOOST_TEST(vrows[0].content.find(mine_id) == std::string::npos, vrows[0].content);
}

BOOST_AUTO_TEST_CASE(a_fact_written_by_the_model_is_read_back_by_it_and_stays_with_its_user) {
  serve();
  auto w = say("u", "mem", "Remember that my editor is helix.");
  BOOST_REQUIRE_MESSAGE(w.status == 200, w.text);
  BOOST_REQUIRE_MESSAGE(w.body["builtin_calls"].size() == 1u, w.text);
  BOOST_TEST(w.body["builtin_calls"][0]["name"] == "memory");
  BOOST_TEST(w.body["answer"].get<std::string>().find("fact 'editor' set to helix")
             != std::string::npos);
  auto facts = get("/v1/users/u/facts");
  BOOST_REQUIRE(facts.body["facts"].size() == 1u);
  BOOST_TEST(facts.body["facts"][0]["key"] == "editor");
  BOOST_TEST(facts.body["facts"][0]["value"] == "helix");
  BOOST_TEST(facts.body["facts"][0]["source_session"] == w.body["session_id"]);
  BOOST_TEST(get("/v1/users/v/facts").body["facts"].empty());

  auto r = say("u", "mem-later", "What is my editor?");
  BOOST_REQUIRE_MESSAGE(r.status == 200, r.text);
  BOOST_TEST(r.body["answer"].get<std::string>().find("fact 'editor' = helix") != std::string::npos,
             r.text);
  auto other = say("v", "mem-v", "What is my editor?");
  BOOST_REQUIRE_MESSAGE(other.status == 200, other.text);
  BOOST_TEST(other.body["answer"].get<std::string>().find("No fact 'editor' is remembered")
               != std::string::npos,
             other.text);
}

BOOST_AUTO_TEST_CASE(a_skill_is_loaded_for_its_task_and_unloaded_once_the_loop_answered) {
  write_skill("deploy-app", "1. build the image\n2. push it to the registry zq-registry");
  rc.gateway.skills_dir = dir.file("skills");
  serve();
  auto r = say("u", "skills", "Please deploy-app for the staging cluster.");
  BOOST_REQUIRE_MESSAGE(r.status == 200, r.text);
  BOOST_REQUIRE(r.body["builtin_calls"].size() == 1u);
  BOOST_TEST(r.body["builtin_calls"][0]["name"] == "skill_view");
  auto answer = r.body["answer"].get<std::string>();
  BOOST_TEST(answer.find("skill_view: [SKILL LOADED: deploy-app]") != std::string::npos, answer);

  const auto sid = r.body["session_id"].get<std::string>();
  bool archived_copy = false;
  for (const auto& m : all_rows(sid))
    if (m.role == msg_role::tool && !m.active
        && m.content.find("zq-registry") != std::string::npos)
      archived_copy = true;
  BOOST_TEST(archived_copy); // the loaded text stays stored and searchable
  auto live = stored_live(sid);
  int markers = 0;
  for (const auto& m : live) {
    if (m.role == msg_role::tool) // the answer may quote it; the loaded copy is gone
      BOOST_TEST(m.content.find("zq-registry") == std::string::npos, m.content);
    if (m.role == msg_role::tool && m.content == unloaded_skill_marker("deploy-app"))
      ++markers;
  }
  BOOST_TEST(markers == 1);
  // The system prompt carries the index only.
  BOOST_TEST(live[0].content.find("- deploy-app: how to deploy-app") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_mixed_answer_runs_the_builtin_call_and_leaves_only_the_clients_pending) {
  serve();
  calling_model(1.0);
  auto r = turn_as("u", "mixed", {{"content", "What did we discuss earlier about nothingyet?"},
                                  {"tools", weather_tools()}});
  BOOST_REQUIRE_MESSAGE(r.status == 200, r.text);
  BOOST_TEST(r.body["finish_reason"] == "tool_calls");
  BOOST_REQUIRE(r.body["tool_calls"].size() == 1u);
  BOOST_TEST(r.body["tool_calls"][0]["name"] == "get_weather");
  BOOST_REQUIRE(r.body["builtin_calls"].size() == 1u);
  BOOST_TEST(r.body["builtin_calls"][0]["name"] == "session_search");
  const auto sid = r.body["session_id"].get<std::string>();
  auto tools = tool_rows(sid);
  BOOST_REQUIRE(tools.size() == 1u); // the builtin's result; the client's call waits
  BOOST_TEST(tools[0].content.find("Found 0 earlier conversations") == 0u, tools[0].content);

  // The builtin call is answered already: a result for it is refused, nothing stored.
  auto wrong = turn_as("u", "mixed", {{"tool_results", json::array({{{"tool_call_id",
                                        r.body["builtin_calls"][0]["id"]}, {"content", "x"}}})}});
  BOOST_TEST(wrong.status == 400);
  auto done = turn_as("u", "mixed", {{"tool_results", json::array({{{"tool_call_id",
                                       r.body["tool_calls"][0]["id"]}, {"content", "4 C"}}})}});
  BOOST_REQUIRE_MESSAGE(done.status == 200, done.text);
  BOOST_TEST(done.body["finish_reason"] == "stop");
  auto rows = all_rows(sid);
  std::vector<msg_role> roles;
  for (const auto& m : rows)
    roles.push_back(m.role);
  std::vector<msg_role> expected{msg_role::system, msg_role::user, msg_role::assistant,
                                 msg_role::tool, msg_role::tool, msg_role::assistant};
  BOOST_TEST(roles == expected, boost::test_tools::per_element());
  BOOST_REQUIRE(rows.size() == 6u);
  BOOST_TEST(rows[2].tool_calls.size() == 2u);
  BOOST_TEST(rows[3].tool_name == "session_search");
  BOOST_TEST(rows[4].tool_name == "get_weather");
}

BOOST_AUTO_TEST_CASE(builtin_rounds_count_against_the_round_cap) {
  rc.gateway.max_tool_rounds = 1;
  serve();
  auto r = say("u", "capped", "What did we discuss earlier about anything?");
  BOOST_TEST(r.status == 409, r.text);
  BOOST_TEST(r.body["error"]["code"] == "tool_round_cap", r.text);
  auto sid = snapshot("capped").record.id;
  auto rows = all_rows(sid);
  BOOST_REQUIRE(rows.size() == 4u); // system, user, the call, its result: nothing pending
  BOOST_TEST(rows[3].role == msg_role::tool);
  BOOST_TEST(rows[3].tool_name == "session_search");
  auto next = say("u", "capped", "thanks");
  BOOST_TEST(next.status == 200, next.text);
}

BOOST_AUTO_TEST_CASE(a_client_tool_named_like_a_builtin_wins_and_its_call_is_pending) {
  serve();
  auto tools = json::parse(R"([{"type":"function","function":{"name":"memory","parameters":
    {"type":"object","properties":{"action":{"type":"string"}},"required":["action"]}}}])");
  auto r = turn_as("u", "shadow", {{"content", "Remember that my editor is vim."},
                                   {"tools", tools}});
  BOOST_REQUIRE_MESSAGE(r.status == 200, r.text);
  BOOST_TEST(r.body["finish_reason"] == "tool_calls");
  BOOST_REQUIRE(r.body["tool_calls"].size() == 1u);
  BOOST_TEST(r.body["tool_calls"][0]["name"] == "memory");
  BOOST_TEST(r.body["builtin_calls"].empty());
  BOOST_TEST(get("/v1/users/u/facts").body["facts"].empty());
}

BOOST_AUTO_TEST_SUITE_END() // builtin_tools_e2e

BOOST_AUTO_TEST_SUITE_END() // builtin_tools_e2e_test
