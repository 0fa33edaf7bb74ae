// The tool-call rules at the HTTP append route (issue 30 item 2), one case per rule:
// tool_calls on a non-assistant row, more than gateway.max_tool_calls_per_message calls,
// an empty id, a repeated id, arguments above 64 KiB, a call answered twice. Each is a
// 400 bad_request naming the rule and the offending index or id, and stores nothing: a
// refused row for a new key opens no session, a refused row for an open one adds no row.
#include <boost/test/unit_test.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "actors/runtime.hpp"
#include "policies/tool_call_rules.hpp"
#include "tests/http_api_fixture.hpp"

BOOST_AUTO_TEST_SUITE(http_tool_rules_test)

using namespace mneme;
using json = nlohmann::json;

namespace {

struct tool_rules_fixture : test::http_api_fixture {
  tool_rules_fixture() { rc.gateway.max_tool_calls_per_message = 3; }

  static json calls_of(std::initializer_list<const char*> ids, std::string args = "{}") {
    auto arr = json::array();
    for (auto id : ids)
      arr.push_back({{"id", id}, {"name", "lookup"}, {"arguments", args}});
    return arr;
  }
  answer append_row(const std::string& key, json body) {
    if (!body.contains("content"))
      body["content"] = "";
    return post("/v1/sessions/" + key + "/messages", body);
  }
  // A 400 bad_request whose message holds every piece of `parts`.
  static void expect_refused(const answer& a, std::initializer_list<std::string> parts) {
    BOOST_TEST(a.status == 400, a.text);
    BOOST_REQUIRE_MESSAGE(a.content_type == "application/json", a.text);
    BOOST_TEST(a.body["error"]["code"] == "bad_request");
    auto text = a.body["error"]["message"].get<std::string>();
    for (const auto& p : parts)
      BOOST_TEST(text.find(p) != std::string::npos, "'" << p << "' in: " << text);
  }
  // The key has no session: the refused append opened none.
  void expect_no_session(const std::string& key) {
    auto s = get("/v1/sessions/" + key);
    BOOST_TEST(s.status == 404, s.text);
  }
  size_t live_count(const std::string& key) {
    auto s = get("/v1/sessions/" + key);
    BOOST_REQUIRE_MESSAGE(s.status == 200, s.text);
    return s.body["live"].size();
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(http_tool_rules, tool_rules_fixture)

BOOST_AUTO_TEST_CASE(tool_calls_on_a_user_row_are_400_calls_on_non_assistant) {
  serve();
  auto a = append_row("r1", {{"role", "user"}, {"content", "hi"},
                             {"tool_calls", calls_of({"c1"})}});
  expect_refused(a, {"calls_on_non_assistant", "assistant"});
  expect_no_session("r1");
}

BOOST_AUTO_TEST_CASE(more_calls_than_max_tool_calls_per_message_are_400_too_many_calls) {
  serve();
  auto a = append_row("r2", {{"role", "assistant"},
                             {"tool_calls", calls_of({"c1", "c2", "c3", "c4"})}});
  expect_refused(a, {"too_many_calls", "4 tool_calls, above 3",
                     "gateway.max_tool_calls_per_message"});
  expect_no_session("r2");
  auto three = append_row("r2", {{"role", "assistant"},
                                 {"tool_calls", calls_of({"c1", "c2", "c3"})}});
  BOOST_TEST(three.status == 201, three.text);
}

BOOST_AUTO_TEST_CASE(an_empty_call_id_is_400_empty_call_id_naming_its_index) {
  serve();
  auto a = append_row("r3", {{"role", "assistant"}, {"tool_calls", calls_of({"c1", ""})}});
  expect_refused(a, {"empty_call_id", "tool_calls[1].id"});
  expect_no_session("r3");
}

BOOST_AUTO_TEST_CASE(a_repeated_call_id_is_400_duplicate_call_id_naming_both_indexes) {
  serve();
  auto a = append_row("r4", {{"role", "assistant"},
                             {"tool_calls", calls_of({"c1", "c2", "c1"})}});
  expect_refused(a, {"duplicate_call_id", "tool_calls[2].id 'c1'", "tool_calls[0]"});
  expect_no_session("r4");
}

BOOST_AUTO_TEST_CASE(arguments_above_64_kib_are_400_arguments_too_large_naming_the_call) {
  serve();
  std::string big(max_tool_call_argument_bytes + 1, 'x');
  auto a = append_row("r5", {{"role", "assistant"}, {"tool_calls", calls_of({"c1"}, big)}});
  expect_refused(a, {"arguments_too_large", "tool_calls[0].arguments", "'c1'",
                     "65537 bytes, above 65536"});
  expect_no_session("r5");
  std::string edge(max_tool_call_argument_bytes, 'x');
  auto ok = append_row("r5", {{"role", "assistant"}, {"tool_calls", calls_of({"c1"}, edge)}});
  BOOST_TEST(ok.status == 201, ok.text);
}

BOOST_AUTO_TEST_CASE(a_second_answer_to_a_call_is_400_call_already_answered) {
  serve();
  auto call = append_row("r6", {{"role", "assistant"}, {"tool_calls", calls_of({"c1", "c2"})}});
  BOOST_REQUIRE_MESSAGE(call.status == 201, call.text);
  auto first = append_row("r6", {{"role", "tool"}, {"content", "42"}, {"tool_call_id", "c1"}});
  BOOST_REQUIRE_MESSAGE(first.status == 201, first.text);
  auto before = live_count("r6");
  auto again = append_row("r6", {{"role", "tool"}, {"content", "43"}, {"tool_call_id", "c1"}});
  expect_refused(again, {"call_already_answered", "'c1'"});
  BOOST_TEST(live_count("r6") == before);
  auto other = append_row("r6", {{"role", "tool"}, {"content", "7"}, {"tool_call_id", "c2"}});
  BOOST_TEST(other.status == 201, other.text);
}

BOOST_AUTO_TEST_SUITE_END() // http_tool_rules

BOOST_AUTO_TEST_SUITE_END() // http_tool_rules_test
