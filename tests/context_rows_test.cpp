// Tests of the context service's batch check (issue 27 item 2; policies/context_rows.hpp):
// a batch of rows is checked as if appended in order after the live rows, so a bad row
// anywhere refuses the whole batch with its index, and an accepted batch passes the
// session's own append checks row by row.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <ostream>
#include <string>
#include <vector>

#include "policies/context_rows.hpp"
#include "tests/message_builders.hpp"

BOOST_AUTO_TEST_SUITE(context_rows_test)

using namespace mneme;
using mneme::testing::msg;
using mneme::testing::tool_result;
namespace data = boost::unit_test::data;

namespace {

message ctx_calls(std::vector<std::string> ids, std::string content = "") {
  auto m = msg(msg_role::assistant, std::move(content));
  for (auto& id : ids)
    m.tool_calls.push_back(tool_call{id, "grep", "{}"});
  return m;
}

struct batch_case {
  const char* what;
  std::vector<message> live;
  std::vector<std::string> in_flight;
  std::vector<message> rows;
  context_row_problem expected;
  size_t index;
  std::string needle; // in the refusal text
};
std::ostream& operator<<(std::ostream& os, const batch_case& c) { return os << c.what; }

const std::vector<message> ctx_live{msg(msg_role::system, "s"), msg(msg_role::user, "u"),
                                    ctx_calls({"live_1", "live_2"})};

const std::vector<batch_case> batch_cases{
  {"an empty batch passes", ctx_live, {}, {}, context_row_problem::ok, 0, ""},
  {"a user and a system row pass", ctx_live, {},
   {msg(msg_role::system, "note"), msg(msg_role::user, "hi")}, context_row_problem::ok, 0, ""},
  {"results of live calls pass", ctx_live, {},
   {tool_result("live_1", "grep", "a"), tool_result("live_2", "grep", "b")},
   context_row_problem::ok, 0, ""},
  {"a result of a call earlier in the batch passes", {}, {},
   {msg(msg_role::user, "u"), ctx_calls({"b1"}), tool_result("b1", "grep", "r")},
   context_row_problem::ok, 0, ""},
  {"a result of an unknown call is refused with its index", ctx_live, {},
   {msg(msg_role::user, "u"), tool_result("nope", "grep", "r")},
   context_row_problem::tool_pairing, 1, "'nope'"},
  {"a result before its call in the batch is refused", {}, {},
   {tool_result("b1", "grep", "r"), ctx_calls({"b1"})}, context_row_problem::tool_pairing, 0,
   "'b1'"},
  {"a tool row without a call id is refused", ctx_live, {},
   {tool_result("", "grep", "r")}, context_row_problem::tool_pairing, 0, "tool_call_id"},
  {"a second result of a live call in the batch is refused", ctx_live, {},
   {tool_result("live_1", "grep", "a"), tool_result("live_1", "grep", "again")},
   context_row_problem::tool_calls, 1, "call_already_answered"},
  {"a result of a live call already answered live is refused",
   {ctx_calls({"c"}), tool_result("c", "grep", "done")}, {}, {tool_result("c", "grep", "x")},
   context_row_problem::tool_calls, 0, "call_already_answered"},
  {"a result whose answer is in flight is refused", ctx_live, {"live_2"},
   {tool_result("live_2", "grep", "x")}, context_row_problem::tool_calls, 0,
   "call_already_answered"},
  {"a second result of a batch call is refused", {}, {},
   {ctx_calls({"b1"}), tool_result("b1", "grep", "a"), tool_result("b1", "grep", "b")},
   context_row_problem::tool_calls, 2, "call_already_answered"},
  {"tool_calls on a user row are refused", {}, {},
   {msg(msg_role::user, "ok"), [] { auto m = ctx_calls({"x"}); m.role = msg_role::user; return m; }()},
   context_row_problem::tool_calls, 1, "calls_on_non_assistant"},
  {"duplicate call ids in a row are refused", {}, {}, {ctx_calls({"d", "d"})},
   context_row_problem::tool_calls, 0, "duplicate_call_id"},
  {"an assistant row without content or calls is refused", {}, {},
   {msg(msg_role::assistant, "")}, context_row_problem::empty_assistant, 0, "content"},
  {"an id reused by a batch row answers the batch row, not the live one",
   {ctx_calls({"r"}), tool_result("r", "grep", "old")}, {},
   {ctx_calls({"r"}), tool_result("r", "grep", "new")}, context_row_problem::ok, 0, ""},
};

} // namespace

BOOST_DATA_TEST_CASE(a_batch_is_checked_as_if_appended_in_order, data::make(batch_cases), c) {
  auto got = check_context_rows(c.live, c.in_flight, c.rows, 8);
  BOOST_TEST(got.problem == c.expected);
  if (c.expected == context_row_problem::ok) {
    BOOST_TEST(got.ok());
    BOOST_TEST(describe_context_rows_refusal(got).empty());
    return;
  }
  BOOST_TEST(got.index == c.index);
  auto text = describe_context_rows_refusal(got);
  BOOST_TEST(text.find(c.needle) != std::string::npos, text);
}

BOOST_AUTO_TEST_CASE(too_many_calls_in_a_row_names_the_limit) {
  auto got = check_context_rows({}, {}, {ctx_calls({"a", "b", "c"})}, 2);
  BOOST_TEST(got.problem == context_row_problem::tool_calls);
  BOOST_TEST(got.calls.rule == tool_call_rule::too_many_calls);
  BOOST_TEST(describe_context_rows_refusal(got).find("above 2") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END() // context_rows_test
