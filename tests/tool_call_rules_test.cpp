// Tests of the tool-call structure rules (issue 30 item 2): tool_calls only on assistant
// rows, at most max_calls per row, ids non-empty and unique within a row, arguments of at
// most 64 KiB, and a call answered once (live rows and answers still in flight).
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <ostream>
#include <string>
#include <vector>

#include "policies/tool_call_rules.hpp"

BOOST_AUTO_TEST_SUITE(tool_call_rules_test)

using namespace mneme;
namespace data = boost::unit_test::data;

namespace {

message rules_row(msg_role role, std::vector<std::string> ids = {},
                  std::string arguments = "{}") {
  message m;
  m.role = role;
  m.content = "x";
  for (auto& id : ids)
    m.tool_calls.push_back(tool_call{id, "grep", arguments});
  return m;
}

message rules_answer(std::string call_id, bool active = true) {
  message m;
  m.role = msg_role::tool;
  m.content = "42";
  m.tool_call_id = std::move(call_id);
  m.active = active;
  m.compacted = !active;
  return m;
}

std::vector<std::string> rules_ids(size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i)
    out.push_back("c" + std::to_string(i));
  return out;
}

struct structure_case {
  const char* what;
  message row;
  int64_t max_calls;
  tool_call_rule expected;
  size_t index;        // checked for the per-call rules
  std::string call_id; // checked when not empty
};
std::ostream& operator<<(std::ostream& os, const structure_case& c) { return os << c.what; }

const std::string big_args(max_tool_call_argument_bytes + 1, 'a');
const std::string edge_args(max_tool_call_argument_bytes, 'a');

const std::vector<structure_case> structure_cases{
  {"a user row without calls", rules_row(msg_role::user), 128, tool_call_rule::ok, 0, ""},
  {"an assistant row without calls", rules_row(msg_role::assistant), 128, tool_call_rule::ok,
   0, ""},
  {"an assistant row with two calls", rules_row(msg_role::assistant, {"a", "b"}), 128,
   tool_call_rule::ok, 0, ""},
  {"exactly max_calls calls", rules_row(msg_role::assistant, rules_ids(3)), 3,
   tool_call_rule::ok, 0, ""},
  {"arguments of exactly 64 KiB", rules_row(msg_role::assistant, {"a"}, edge_args), 128,
   tool_call_rule::ok, 0, ""},
  {"empty arguments", rules_row(msg_role::assistant, {"a"}, ""), 128, tool_call_rule::ok, 0,
   ""},
  {"calls on a user row", rules_row(msg_role::user, {"a"}), 128,
   tool_call_rule::calls_on_non_assistant, 0, ""},
  {"calls on a tool row", rules_row(msg_role::tool, {"a"}), 128,
   tool_call_rule::calls_on_non_assistant, 0, ""},
  {"calls on a system row", rules_row(msg_role::system, {"a"}), 128,
   tool_call_rule::calls_on_non_assistant, 0, ""},
  {"one call above max_calls", rules_row(msg_role::assistant, rules_ids(4)), 3,
   tool_call_rule::too_many_calls, 0, ""},
  {"10,000 calls under the default", rules_row(msg_role::assistant, rules_ids(10000)),
   default_max_tool_calls_per_message, tool_call_rule::too_many_calls, 0, ""},
  {"too many calls wins over an empty id", rules_row(msg_role::assistant, {"", "", ""}), 2,
   tool_call_rule::too_many_calls, 0, ""},
  {"an empty first id", rules_row(msg_role::assistant, {""}), 128,
   tool_call_rule::empty_call_id, 0, ""},
  {"an empty third id", rules_row(msg_role::assistant, {"a", "b", ""}), 128,
   tool_call_rule::empty_call_id, 2, ""},
  {"a repeated id", rules_row(msg_role::assistant, {"a", "b", "a"}), 128,
   tool_call_rule::duplicate_call_id, 2, "a"},
  {"ids differing in case are distinct", rules_row(msg_role::assistant, {"a", "A"}), 128,
   tool_call_rule::ok, 0, ""},
  {"arguments one byte above 64 KiB", rules_row(msg_role::assistant, {"a", "b"}, big_args),
   128, tool_call_rule::arguments_too_large, 0, "a"},
};

struct answer_case {
  const char* what;
  std::vector<message> live;
  std::vector<std::string> in_flight;
  message row;
  tool_call_rule expected;
};
std::ostream& operator<<(std::ostream& os, const answer_case& c) { return os << c.what; }

const std::vector<answer_case> answer_cases{
  {"a first answer", {rules_row(msg_role::assistant, {"c1"})}, {}, rules_answer("c1"),
   tool_call_rule::ok},
  {"the second call's first answer",
   {rules_row(msg_role::assistant, {"c1", "c2"}), rules_answer("c1")}, {}, rules_answer("c2"),
   tool_call_rule::ok},
  {"a second answer in the live rows",
   {rules_row(msg_role::assistant, {"c1"}), rules_answer("c1")}, {}, rules_answer("c1"),
   tool_call_rule::call_already_answered},
  {"a second answer still in flight", {rules_row(msg_role::assistant, {"c1"})}, {"c1"},
   rules_answer("c1"), tool_call_rule::call_already_answered},
  {"an id reused by a later assistant row answers the later call",
   {rules_row(msg_role::assistant, {"c1"}), rules_answer("c1"), rules_row(msg_role::user),
    rules_row(msg_role::assistant, {"c1"})},
   {}, rules_answer("c1"), tool_call_rule::ok},
  {"an archived answer does not count",
   {rules_row(msg_role::assistant, {"c1"}), rules_answer("c1", false)}, {},
   rules_answer("c1"), tool_call_rule::ok},
  {"a call that is not live is check_tool_row's business", {}, {}, rules_answer("c1"),
   tool_call_rule::ok},
  {"a user row", {rules_row(msg_role::assistant, {"c1"}), rules_answer("c1")}, {},
   rules_row(msg_role::user), tool_call_rule::ok},
};

} // namespace

BOOST_DATA_TEST_CASE(a_row_breaking_a_structure_rule_is_refused_naming_the_rule_and_call,
                     data::make(structure_cases), c) {
  auto got = check_tool_call_structure(c.row, c.max_calls);
  BOOST_TEST(to_string(got.rule) == to_string(c.expected), c.what);
  if (c.expected == tool_call_rule::empty_call_id
      || c.expected == tool_call_rule::duplicate_call_id
      || c.expected == tool_call_rule::arguments_too_large)
    BOOST_TEST(got.index == c.index, c.what);
  if (!c.call_id.empty())
    BOOST_TEST(got.call_id == c.call_id, c.what);
}

BOOST_DATA_TEST_CASE(a_tool_row_answering_an_answered_call_is_refused,
                     data::make(answer_cases), c) {
  auto got = check_answered_once(c.live, c.in_flight, c.row);
  BOOST_TEST(to_string(got.rule) == to_string(c.expected), c.what);
  if (c.expected == tool_call_rule::call_already_answered)
    BOOST_TEST(got.call_id == c.row.tool_call_id, c.what);
}

BOOST_AUTO_TEST_CASE(each_refusal_text_names_its_rule_and_the_offending_call) {
  auto dup = check_tool_call_structure(rules_row(msg_role::assistant, {"a", "b", "a"}), 128);
  auto text = describe_tool_call_refusal(dup);
  BOOST_TEST(text.find("duplicate_call_id") != std::string::npos, text);
  BOOST_TEST(text.find("tool_calls[2]") != std::string::npos, text);
  BOOST_TEST(text.find("'a'") != std::string::npos, text);
  BOOST_TEST(text.find("tool_calls[0]") != std::string::npos, text);
  auto many = describe_tool_call_refusal(
    check_tool_call_structure(rules_row(msg_role::assistant, rules_ids(5)), 4));
  BOOST_TEST(many.find("too_many_calls") != std::string::npos, many);
  BOOST_TEST(many.find("5 tool_calls, above 4") != std::string::npos, many);
  BOOST_TEST(many.find("gateway.max_tool_calls_per_message") != std::string::npos, many);
  auto large = describe_tool_call_refusal(
    check_tool_call_structure(rules_row(msg_role::assistant, {"q"}, big_args), 128));
  BOOST_TEST(large.find("arguments_too_large") != std::string::npos, large);
  BOOST_TEST(large.find("65537 bytes, above 65536") != std::string::npos, large);
  auto answered = describe_tool_call_refusal(check_answered_once(
    {rules_row(msg_role::assistant, {"c9"}), rules_answer("c9")}, {}, rules_answer("c9")));
  BOOST_TEST(answered.find("call_already_answered") != std::string::npos, answered);
  BOOST_TEST(answered.find("'c9'") != std::string::npos, answered);
  BOOST_TEST(describe_tool_call_refusal(tool_call_check{}).empty());
}

BOOST_AUTO_TEST_SUITE_END() // tool_call_rules_test
