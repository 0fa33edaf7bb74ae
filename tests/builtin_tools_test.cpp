// policies/builtin_tools: which tools are enabled and offered, the merge with the
// client's tools, which calls are builtin, argument validation (an error text for the
// model, never a failure), result bounding, the rendering of search and memory results
// and the skill_view unload plan.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "policies/builtin_tools.hpp"
#include "policies/skills_index.hpp"

BOOST_AUTO_TEST_SUITE(builtin_tools_test)

using namespace mneme;

namespace {

tool_args bt_args(std::vector<std::pair<std::string, tool_arg>> members) {
  tool_args a;
  a.object = true;
  for (auto& [k, v] : members)
    a.values.emplace(k, v);
  return a;
}
tool_arg bt_str(std::string s) {
  tool_arg a;
  a.type = tool_arg::kind::string;
  a.text = std::move(s);
  return a;
}
tool_arg bt_int(int64_t n) {
  tool_arg a;
  a.type = tool_arg::kind::integer;
  a.number = n;
  return a;
}
message bt_row(int64_t id, msg_role role, std::string content, std::string tool_name = {}) {
  message m;
  m.id = id;
  m.role = role;
  m.content = std::move(content);
  m.tool_name = std::move(tool_name);
  if (role == msg_role::tool)
    m.tool_call_id = "c" + std::to_string(id);
  return m;
}

} // namespace

BOOST_AUTO_TEST_CASE(config_names_parse_and_an_unknown_one_is_named_with_its_index) {
  auto all = parse_builtin_tools({"session_search", "memory", "skills"});
  BOOST_TEST(all.error.empty());
  BOOST_TEST((all.set.session_search && all.set.memory && all.set.skills));
  auto none = parse_builtin_tools({});
  BOOST_TEST(!none.set.any());
  auto bad = parse_builtin_tools({"memory", "skill_view"});
  BOOST_TEST(bad.error.find("gateway.builtin_tools[1]") != std::string::npos, bad.error);
  BOOST_TEST(bad.error.find("'skill_view'") != std::string::npos, bad.error);
  BOOST_TEST(!bad.set.any());
}

BOOST_AUTO_TEST_CASE(unavailable_tools_are_not_enabled_memory_always_is) {
  auto s = resolve_builtin_tools(builtin_set::all(), {});
  BOOST_TEST(!s.session_search);
  BOOST_TEST(s.memory);
  BOOST_TEST(!s.skills);
  s = resolve_builtin_tools(builtin_set::all(), {true, true});
  BOOST_TEST((s.session_search && s.memory && s.skills));
  s = resolve_builtin_tools(builtin_set{false, false, true}, {true, true});
  BOOST_TEST((!s.session_search && !s.memory && s.skills));
}

BOOST_AUTO_TEST_CASE(a_client_tool_of_the_same_name_shadows_the_builtin) {
  auto s = offer_builtins(builtin_set::all(), {"get_weather", "memory"});
  BOOST_TEST(s.session_search);
  BOOST_TEST(!s.memory);
  BOOST_TEST(s.skills);
  BOOST_TEST(!builtin_of("memory", s).has_value());
  BOOST_TEST((builtin_of("session_search", s) == builtin_tool::session_search));
  BOOST_TEST((builtin_of("skill_view", s) == builtin_tool::skill_view));
  BOOST_TEST(!builtin_of("skills", s).has_value()); // the config name is not a tool name
  BOOST_TEST(!builtin_of("get_weather", s).has_value());
}

BOOST_AUTO_TEST_CASE(the_merge_appends_the_offered_schemas_to_the_clients_array) {
  builtin_set mem{false, true, false};
  BOOST_TEST(merge_tools_json("", {}) == "");
  BOOST_TEST(merge_tools_json("[]", {}) == "");
  BOOST_TEST(merge_tools_json(R"([{"a":1}])", {}) == R"([{"a":1}])");
  BOOST_TEST(merge_tools_json("", mem) == "[" + std::string{tool_schema_json(builtin_tool::memory)} + "]");
  BOOST_TEST(merge_tools_json(" [ ] ", mem) == "[" + std::string{tool_schema_json(builtin_tool::memory)} + "]");
  auto merged = merge_tools_json(R"([{"a":1}] )", builtin_set::all());
  BOOST_TEST(merged.find(R"([{"a":1},{"type":"function","function":{"name":"session_search")") == 0u,
             merged);
  BOOST_TEST(merged.find(R"("name":"memory")") != std::string::npos);
  BOOST_TEST(merged.find(R"("name":"skill_view")") != std::string::npos);
  BOOST_TEST(merged.back() == ']');
}

BOOST_AUTO_TEST_CASE(calls_split_into_builtin_and_client_in_call_order) {
  std::vector<tool_call> calls{{"1", "get_weather", "{}"}, {"2", "memory", "{}"},
                               {"3", "session_search", "{}"}, {"4", "read_file", "{}"}};
  auto s = split_calls(calls, builtin_set{true, true, false});
  BOOST_REQUIRE(s.builtin.size() == 2u);
  BOOST_TEST(s.builtin[0].id == "2");
  BOOST_TEST(s.builtin[1].id == "3");
  BOOST_REQUIRE(s.client.size() == 2u);
  BOOST_TEST(s.client[0].id == "1");
  BOOST_TEST(s.client[1].id == "4");
}

BOOST_AUTO_TEST_CASE(bad_arguments_become_an_error_text_naming_the_field) {
  auto check = [](builtin_tool t, const tool_args& a, const std::string& needle) {
    auto r = validate_builtin_call(t, a);
    BOOST_TEST(!r.ok());
    BOOST_TEST(r.error.find(builtin_error_prefix) == 0u, r.error);
    BOOST_TEST(r.error.find(needle) != std::string::npos, r.error);
  };
  check(builtin_tool::session_search, tool_args{}, "JSON object");
  check(builtin_tool::session_search, bt_args({}), "'query' is missing");
  check(builtin_tool::session_search, bt_args({{"query", bt_int(3)}}), "'query' must be a string");
  check(builtin_tool::session_search, bt_args({{"query", bt_str("")}}), "'query' must not be empty");
  check(builtin_tool::session_search, bt_args({{"query", bt_str("x")}, {"limit", bt_int(11)}}),
        "'limit'");
  check(builtin_tool::session_search, bt_args({{"query", bt_str("x")}, {"limit", bt_str("2")}}),
        "'limit'");
  check(builtin_tool::session_search, bt_args({{"query", bt_str("x")}, {"mode", bt_str("meaning")}}),
        "'mode' must be one of automatic, fts, vector, hybrid (got 'meaning')");
  check(builtin_tool::session_search, bt_args({{"query", bt_str("x")}, {"mode", bt_int(1)}}),
        "'mode' must be one of");
  check(builtin_tool::memory, bt_args({}), "'action' is missing");
  check(builtin_tool::memory, bt_args({{"action", bt_str("drop")}}), "'action' must be one of");
  check(builtin_tool::memory, bt_args({{"action", bt_str("get")}}), "'key' is missing");
  check(builtin_tool::memory, bt_args({{"action", bt_str("set")}, {"key", bt_str("k")}}),
        "'value' is missing");
  check(builtin_tool::memory,
        bt_args({{"action", bt_str("get")}, {"key", bt_str(std::string(257, 'k'))}}), "256 bytes");
  check(builtin_tool::memory, bt_args({{"action", bt_str("search")}, {"query", bt_int(1)}}),
        "'query' must be a string");
  check(builtin_tool::skill_view, bt_args({{"name", tool_arg{}}}), "'name' must be a string");
}

BOOST_AUTO_TEST_CASE(good_arguments_are_read_with_their_defaults) {
  auto s = validate_builtin_call(builtin_tool::session_search, bt_args({{"query", bt_str("deploy")}}));
  BOOST_TEST(s.ok());
  BOOST_TEST(s.query == "deploy");
  BOOST_TEST(s.limit == builtin_search_default_limit);
  s = validate_builtin_call(builtin_tool::session_search,
                            bt_args({{"query", bt_str("deploy")}, {"limit", bt_int(10)}}));
  BOOST_TEST(s.limit == 10);
  BOOST_TEST(s.mode.empty()); // the search's default
  for (const char* mode : {"automatic", "fts", "vector", "hybrid"}) {
    s = validate_builtin_call(builtin_tool::session_search,
                              bt_args({{"query", bt_str("deploy")}, {"mode", bt_str(mode)}}));
    BOOST_TEST(s.ok(), mode);
    BOOST_TEST(s.mode == mode);
  }
  auto m = validate_builtin_call(builtin_tool::memory, bt_args({{"action", bt_str("set")},
                                                                {"key", bt_str("editor")},
                                                                {"value", bt_str("vim")}}));
  BOOST_TEST(m.ok());
  BOOST_TEST((m.action == memory_action::set));
  BOOST_TEST(m.key == "editor");
  BOOST_TEST(m.value == "vim");
  m = validate_builtin_call(builtin_tool::memory, bt_args({{"action", bt_str("delete")},
                                                           {"key", bt_str("editor")}}));
  BOOST_TEST((m.action == memory_action::remove));
  m = validate_builtin_call(builtin_tool::memory, bt_args({{"action", bt_str("search")}}));
  BOOST_TEST(m.ok());
  BOOST_TEST(m.query.empty());
  auto k = validate_builtin_call(builtin_tool::skill_view, bt_args({{"name", bt_str("deploy")}}));
  BOOST_TEST(k.ok());
  BOOST_TEST(k.name == "deploy");
}

BOOST_AUTO_TEST_CASE(results_are_bounded_on_a_utf8_boundary_with_a_note) {
  BOOST_TEST(bound_result("short", 1024) == "short");
  std::string big;
  for (int i = 0; i < 2000; ++i)
    big += "é"; // two bytes each
  auto cut = bound_result(big, 1024);
  BOOST_TEST(cut.size() <= 1024u);
  BOOST_TEST(cut.find("[cut: ") != std::string::npos, cut);
  BOOST_TEST(cut.find(" of 4000 bytes shown]") != std::string::npos, cut);
  auto body = cut.substr(0, cut.find("\n[cut: "));
  BOOST_TEST(body.size() % 2 == 0u); // no half code point
  BOOST_TEST(body == big.substr(0, body.size()));
}

BOOST_AUTO_TEST_CASE(a_search_result_shows_each_view_with_its_bookends) {
  search_view v;
  v.session_id = "s-old";
  v.kind = "message";
  v.snippet = "the >>>zebra<<< plan";
  v.first = {bt_row(1, msg_role::user, "start of it")};
  v.window = {bt_row(5, msg_role::user, "the zebra plan"), bt_row(6, msg_role::assistant, "ok")};
  v.last = {bt_row(9, msg_role::assistant, "done")};
  auto text = render_search_result("zebra", {v});
  BOOST_TEST(text.find("Found 1 earlier conversation for \"zebra\"") == 0u, text);
  BOOST_TEST(text.find("[1] the >>>zebra<<< plan (session s-old, message)") != std::string::npos, text);
  auto first = text.find("user: start of it");
  auto hit = text.find("user: the zebra plan");
  auto last = text.find("assistant: done");
  BOOST_TEST(first < hit);
  BOOST_TEST(hit < last);
  BOOST_TEST(last != std::string::npos);
  BOOST_TEST(render_search_result("x", {}).find("Found 0 earlier conversations") == 0u);
}

BOOST_AUTO_TEST_CASE(memory_results_say_what_happened) {
  builtin_request r;
  r.tool = builtin_tool::memory;
  r.action = memory_action::get;
  r.key = "editor";
  BOOST_TEST(render_memory_result(r, {}) == "No fact 'editor' is remembered.");
  BOOST_TEST(render_memory_result(r, {{"editor", "vim"}}) == "fact 'editor' = vim");
  r.action = memory_action::set;
  r.value = "emacs";
  BOOST_TEST(render_memory_result(r, {}) == "fact 'editor' set to emacs");
  r.action = memory_action::search;
  r.query = "";
  BOOST_TEST(render_memory_result(r, {{"a", "1"}, {"b", "2"}}) == "2 facts:\n- a: 1\n- b: 2");
}

BOOST_AUTO_TEST_CASE(a_skill_view_result_keeps_its_markers_when_cut_and_is_unloaded_after_the_loop) {
  std::string text(5000, 'x');
  auto loaded = skill_view_result("deploy", text, 1024);
  BOOST_TEST(loaded.size() <= 1024u);
  BOOST_TEST((loaded_skill_name(loaded) == std::optional<std::string>{"deploy"}));
  auto whole = skill_view_result("deploy", "short text", 1024);
  skill s{"deploy", "", "short text"};
  BOOST_TEST(whole == loaded_skill_content(s));

  std::vector<message> live{bt_row(1, msg_role::system, loaded_skill_content(s)), // the API's load
                            bt_row(2, msg_role::tool, whole, "skill_view"),
                            bt_row(3, msg_role::tool, "other", "skill_view"),
                            bt_row(4, msg_role::tool, whole, "read_file")};
  auto plan = plan_skill_view_unload(live);
  BOOST_REQUIRE(plan.size() == 1u);
  BOOST_TEST(plan[0].index == 1u);
  BOOST_TEST(plan[0].original_id == 2);
  BOOST_TEST(plan[0].content == unloaded_skill_marker("deploy"));
  BOOST_TEST(plan[0].tokens_reclaimed >= 1);
}

BOOST_AUTO_TEST_SUITE_END() // builtin_tools_test
