// Tests of the fake LLM answering like an agent model (apps/common/fakellm/
// fake_tool_calls.hpp, issue 29 item 5): the fraction of calling answers, parallel calls,
// arguments that follow each tool's schema, the round limit, text that quotes the tool
// results, determinism under the seed, and the wire body of a calling answer.
#include <boost/test/unit_test.hpp>

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/common/fakellm/chat_responder.hpp"
#include "apps/common/fakellm/fake_tool_calls.hpp"

BOOST_AUTO_TEST_SUITE(fake_tool_calls_test)

using namespace mneme;
using namespace mneme::fakellm;
using json = nlohmann::json;

namespace {

const char* weather_schema = R"({"type":"object","properties":{"city":{"type":"string"},
  "days":{"type":"integer","minimum":3},"unit":{"enum":["c","f"]},"deep":{"type":"object",
  "properties":{"n":{"type":"number"},"ok":{"type":"boolean"},"xs":{"type":"array"}},
  "required":["n","ok","xs"]},"note":{"type":"string"}},"required":["city","days","unit","deep"]})";

chat_call agent_call(const std::string& user_text, size_t tools) {
  chat_call c;
  c.model = "m";
  message u;
  u.role = msg_role::user;
  u.content = user_text;
  c.messages = {u};
  for (size_t i = 0; i < tools; ++i)
    c.tools.push_back(offered_tool{"tool" + std::to_string(i), weather_schema, 100});
  return c;
}

// A call offering mneme's built-in tools (by name) besides `client` tools.
chat_call builtin_call(const std::string& user_text, size_t client) {
  auto c = agent_call(user_text, client);
  for (const char* name : {"session_search", "memory", "skill_view"})
    c.tools.push_back(offered_tool{name, R"({"type":"object"})", 50});
  message sys;
  sys.role = msg_role::system;
  sys.content = "Be brief.\n\nSkills available on demand (call skill_view(name) to load one "
                "before using it):\n- deploy-app: ship it\n- write-blog: posts";
  c.messages.insert(c.messages.begin(), sys);
  return c;
}

} // namespace

BOOST_AUTO_TEST_CASE(the_builtin_tools_are_called_by_what_the_user_asks) {
  tool_call_settings never;
  never.fraction = 0.0;
  auto one = [&](const std::string& text) {
    auto calls = fake_tool_calls(builtin_call(text, 0), never);
    BOOST_REQUIRE_MESSAGE(calls.size() == 1u, text);
    return std::make_pair(calls[0].name, json::parse(calls[0].arguments));
  };
  auto [n1, a1] = one("What did we discuss earlier about the Redis latency? thanks");
  BOOST_TEST(n1 == "session_search");
  BOOST_TEST(a1["query"] == "the Redis latency");
  auto [n2, a2] = one("Remember that my editor is helix.");
  BOOST_TEST(n2 == "memory");
  BOOST_TEST(a2 == json::parse(R"({"action":"set","key":"editor","value":"helix"})"));
  auto [n3, a3] = one("what is my editor?");
  BOOST_TEST(n3 == "memory");
  BOOST_TEST(a3 == json::parse(R"({"action":"get","key":"editor"})"));
  auto [n5, a5] = one("What do you remember about the nightly backup?");
  BOOST_TEST(n5 == "memory");
  BOOST_TEST(a5 == json::parse(R"({"action":"search","query":"the nightly backup"})"));
  auto [n4, a4] = one("please deploy-app to staging");
  BOOST_TEST(n4 == "skill_view");
  BOOST_TEST(a4["name"] == "deploy-app");
  BOOST_TEST(fake_tool_calls(builtin_call("redeploy-apps now", 0), never).empty()); // whole words
  BOOST_TEST(fake_tool_calls(builtin_call("hello there", 0), never).empty());
  // Not offered: not called.
  BOOST_TEST(fake_tool_calls(agent_call("What did we discuss earlier about x?", 1), never).empty());
}

BOOST_AUTO_TEST_CASE(random_calls_go_to_the_clients_tools_and_join_a_builtin_call) {
  tool_call_settings always;
  always.fraction = 1.0;
  for (int i = 0; i < 20; ++i) {
    auto calls = fake_tool_calls(builtin_call("message " + std::to_string(i), 2), always);
    BOOST_REQUIRE(!calls.empty());
    for (const auto& c : calls)
      BOOST_TEST((c.name == "tool0" || c.name == "tool1"), c.name);
  }
  auto mixed = fake_tool_calls(builtin_call("What did we discuss earlier about x?", 1), always);
  BOOST_REQUIRE(mixed.size() == 2u);
  BOOST_TEST(mixed[0].name == "session_search");
  BOOST_TEST(mixed[1].name == "tool0");
  BOOST_TEST(mixed[0].id != mixed[1].id);
  // Only builtins offered and no rule-0 words: text.
  BOOST_TEST(fake_tool_calls(builtin_call("hello", 0), always).empty());
}

BOOST_AUTO_TEST_CASE(arguments_fill_every_required_property_by_its_type) {
  auto args = json::parse(schema_arguments(weather_schema, "w"));
  BOOST_TEST(args["city"].is_string());
  BOOST_TEST(args["days"] == 3);
  BOOST_TEST(args["unit"] == "c");
  BOOST_TEST(args["deep"]["n"] == 1.5);
  BOOST_TEST(args["deep"]["ok"] == true);
  BOOST_TEST(args["deep"]["xs"].is_array());
  BOOST_TEST(!args.contains("note"));
  BOOST_TEST(schema_arguments("", "w") == "{}");
  BOOST_TEST(schema_arguments("not json", "w") == "{}");
}

BOOST_AUTO_TEST_CASE(about_the_scenario_fraction_of_answers_call_tools_in_parallel_too) {
  tool_call_settings s;
  s.seed = 5;
  s.fraction = 0.5;
  int calling = 0, parallel = 0;
  for (int i = 0; i < 400; ++i) {
    auto calls = fake_tool_calls(agent_call("question " + std::to_string(i), 3), s);
    calling += calls.empty() ? 0 : 1;
    parallel += calls.size() > 1 ? 1 : 0;
    std::set<std::string> ids, names;
    for (const auto& c : calls) {
      ids.insert(c.id);
      names.insert(c.name);
      BOOST_TEST(json::parse(c.arguments)["days"] == 3);
    }
    BOOST_TEST(ids.size() == calls.size());   // unique ids
    BOOST_TEST(names.size() == calls.size()); // distinct tools
    BOOST_TEST(calls.size() <= 3u);
  }
  BOOST_TEST(calling > 150);
  BOOST_TEST(calling < 250);
  BOOST_TEST(parallel > 50);
  s.fraction = 0.0;
  BOOST_TEST(fake_tool_calls(agent_call("q", 3), s).empty());
  s.fraction = 1.0;
  BOOST_TEST(fake_tool_calls(agent_call("q", 0), s).empty()); // no tools offered
}

BOOST_AUTO_TEST_CASE(the_same_request_and_seed_give_the_same_calls) {
  tool_call_settings s;
  s.fraction = 0.5;
  for (int i = 0; i < 50; ++i) {
    auto call = agent_call("q" + std::to_string(i), 3);
    auto a = fake_tool_calls(call, s);
    auto b = fake_tool_calls(call, s);
    BOOST_REQUIRE(a.size() == b.size());
    for (size_t k = 0; k < a.size(); ++k)
      BOOST_TEST((a[k] == b[k]));
  }
}

BOOST_AUTO_TEST_CASE(after_tool_rounds_rounds_it_answers_text_quoting_the_results) {
  tool_call_settings s;
  s.fraction = 1.0;
  s.max_rounds = 2;
  auto call = agent_call("go", 1);
  for (int round = 0; round < 2; ++round) {
    auto calls = fake_tool_calls(call, s);
    BOOST_REQUIRE(calls.size() == 1u);
    message a;
    a.role = msg_role::assistant;
    a.tool_calls = calls;
    message t;
    t.role = msg_role::tool;
    t.tool_call_id = calls[0].id;
    t.tool_name = calls[0].name;
    t.content = "result " + std::to_string(round);
    call.messages.push_back(a);
    call.messages.push_back(t);
  }
  BOOST_TEST(fake_tool_calls(call, s).empty());
  auto quoted = quote_tool_results(call.messages);
  BOOST_REQUIRE(quoted.has_value());
  BOOST_TEST(*quoted == "Tool results: tool0: result 1");
  answer_settings settings;
  BOOST_TEST(answer_text(call, false, settings) == *quoted);
  call.messages.push_back(call.messages.front()); // a user message last: no quote
  BOOST_TEST(!quote_tool_results(call.messages).has_value());
}

BOOST_AUTO_TEST_CASE(a_calling_answer_is_sent_with_tool_calls_and_their_finish_reason) {
  completion c;
  c.id = "x";
  c.tool_calls = {tool_call{"call_1", "f", "{\"a\":1}"}};
  c.finish_reason = "tool_calls";
  auto body = json::parse(completion_body(c));
  const auto& msg = body["choices"][0]["message"];
  BOOST_TEST(msg["content"].is_null());
  BOOST_TEST(msg["tool_calls"][0]["id"] == "call_1");
  BOOST_TEST(msg["tool_calls"][0]["function"]["arguments"] == "{\"a\":1}");
  BOOST_TEST(body["choices"][0]["finish_reason"] == "tool_calls");
  auto request = parse_chat_call(
    R"({"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function",)"
    R"("function":{"name":"f","parameters":{"type":"object"}}}]})");
  BOOST_REQUIRE(request);
  BOOST_REQUIRE(request->tools.size() == 1u);
  BOOST_TEST(request->tools[0].name == "f");
  BOOST_TEST(request->tools[0].parameters_json == R"({"type":"object"})");
  BOOST_TEST(!parse_chat_call(R"({"model":"m","messages":[{"role":"user"}],"tools":{}})"));
}

BOOST_AUTO_TEST_SUITE_END() // fake_tool_calls_test
