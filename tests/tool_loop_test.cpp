// Tests of the tool loop's decisions (policies/tool_loop.hpp, issue 29): which calls are
// pending, every way tool_results can fail to answer them (unknown, duplicate, missing,
// empty id, nothing pending), the rows stored for results and for abandoned calls, the
// user turn while calls wait, the round cap, and the finish_reason a reply reports.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <ostream>
#include <string>
#include <vector>

#include "policies/tool_loop.hpp"
#include "tests/print_vocabulary.hpp"

BOOST_AUTO_TEST_SUITE(tool_loop_test)

namespace data = boost::unit_test::data;
using namespace mneme;
using verdict = tool_results_verdict;

namespace {

message loop_row(msg_role role, std::string content = "x") {
  message m;
  m.role = role;
  m.content = std::move(content);
  return m;
}

message loop_call(std::vector<std::string> ids) {
  message m = loop_row(msg_role::assistant, "");
  for (auto& id : ids)
    m.tool_calls.push_back(tool_call{id, "fn_" + id, "{\"q\":\"" + id + "\"}"});
  return m;
}

message loop_result(const std::string& id) {
  message m = loop_row(msg_role::tool, "result " + id);
  m.tool_call_id = id;
  return m;
}

// user, call(a, b), result(a): b is pending.
std::vector<message> half_answered() {
  return {loop_row(msg_role::system), loop_row(msg_role::user), loop_call({"a", "b"}),
          loop_result("a")};
}

std::vector<tool_result_input> results_of(std::vector<std::string> ids) {
  std::vector<tool_result_input> out;
  for (auto& id : ids)
    out.push_back(tool_result_input{id, "out " + id, false});
  return out;
}

struct results_case {
  const char* what;
  std::vector<std::string> pending; // call ids of the pending row (empty: none pending)
  std::vector<std::string> sent;
  verdict want;
  std::string id;                    // the id the verdict names
  size_t index;
};
std::ostream& operator<<(std::ostream& os, const results_case& c) { return os << c.what; }

std::vector<message> transcript_pending(const std::vector<std::string>& ids) {
  std::vector<message> live{loop_row(msg_role::user)};
  if (!ids.empty())
    live.push_back(loop_call(ids));
  else
    live.push_back(loop_row(msg_role::assistant, "done"));
  return live;
}

} // namespace

BOOST_AUTO_TEST_CASE(the_pending_calls_are_the_unanswered_calls_of_the_trailing_assistant) {
  auto live = half_answered();
  auto p = find_pending_calls(live);
  BOOST_TEST(p.any());
  BOOST_REQUIRE(p.assistant_index.has_value());
  BOOST_TEST(*p.assistant_index == 2u);
  BOOST_REQUIRE(p.calls.size() == 1u);
  BOOST_TEST(p.calls[0].id == "b");
  BOOST_TEST(p.calls[0].name == "fn_b");
}

BOOST_AUTO_TEST_CASE(nothing_is_pending_after_every_result_or_a_text_answer) {
  auto live = half_answered();
  live.push_back(loop_result("b"));
  BOOST_TEST(!find_pending_calls(live).any());
  live.push_back(loop_row(msg_role::assistant, "text"));
  BOOST_TEST(!find_pending_calls(live).any());
  // A call followed by a user row is no longer pending (the request repair answers it).
  std::vector<message> moved_on{loop_row(msg_role::user), loop_call({"c"}),
                                loop_row(msg_role::user)};
  BOOST_TEST(!find_pending_calls(moved_on).any());
  BOOST_TEST(!find_pending_calls({}).any());
}

BOOST_DATA_TEST_CASE(
    tool_results_must_answer_exactly_the_pending_calls,
    data::make(std::vector<results_case>{
      {"every call once, any order", {"a", "b", "c"}, {"c", "a", "b"}, verdict::ok, "", 0},
      {"a single call", {"a"}, {"a"}, verdict::ok, "", 0},
      {"nothing pending", {}, {"a"}, verdict::no_pending_calls, "", 0},
      {"an unknown id", {"a", "b"}, {"a", "zz"}, verdict::unknown_id, "zz", 1},
      {"a duplicate id", {"a", "b"}, {"a", "a", "b"}, verdict::duplicate_id, "a", 1},
      {"a missing result", {"a", "b", "c"}, {"c", "a"}, verdict::missing_result, "b", 0},
      {"an empty id", {"a"}, {""}, verdict::empty_id, "", 0},
      {"unknown wins over missing", {"a", "b"}, {"x"}, verdict::unknown_id, "x", 0},
    }),
    c) {
  auto live = transcript_pending(c.pending);
  auto check = check_tool_results(find_pending_calls(live), results_of(c.sent));
  BOOST_TEST(check.verdict == c.want);
  BOOST_TEST(check.call_id == c.id);
  if (c.want != verdict::ok && c.want != verdict::no_pending_calls
      && c.want != verdict::missing_result)
    BOOST_TEST(check.index == c.index);
  auto text = describe_tool_results_refusal(check);
  BOOST_TEST(text.empty() == (c.want == verdict::ok));
  if (!c.id.empty())
    BOOST_TEST(text.find("'" + c.id + "'") != std::string::npos, text);
}

BOOST_AUTO_TEST_CASE(the_refusal_text_names_the_field_of_the_offending_entry) {
  auto live = transcript_pending({"a", "b"});
  auto check = check_tool_results(find_pending_calls(live), results_of({"a", "nope"}));
  BOOST_TEST(describe_tool_results_refusal(check)
             == "field 'tool_results[1].tool_call_id': unknown tool call id 'nope' (not a "
                "pending call)");
}

BOOST_AUTO_TEST_CASE(result_rows_answer_their_calls_in_the_order_sent) {
  auto live = transcript_pending({"a", "b"});
  auto pending = find_pending_calls(live);
  auto results = results_of({"b", "a"});
  results[1].is_error = true;
  auto rows = tool_result_rows(pending, results);
  BOOST_REQUIRE(rows.size() == 2u);
  BOOST_TEST(rows[0].role == msg_role::tool);
  BOOST_TEST(rows[0].tool_call_id == "b");
  BOOST_TEST(rows[0].tool_name == "fn_b");
  BOOST_TEST(rows[0].content == "out b");
  BOOST_TEST(rows[1].tool_call_id == "a");
  BOOST_TEST(rows[1].content == std::string{tool_error_prefix} + "out a");
}

BOOST_AUTO_TEST_CASE(an_abandoned_call_gets_one_stub_result_each_in_call_order) {
  auto live = half_answered();
  live.back() = loop_call({"x", "y"}); // user, call(a,b), call(x,y): x and y pending
  auto rows = abandoned_result_rows(find_pending_calls(live));
  BOOST_REQUIRE(rows.size() == 2u);
  BOOST_TEST(rows[0].tool_call_id == "x");
  BOOST_TEST(rows[1].tool_call_id == "y");
  BOOST_TEST(rows[1].tool_name == "fn_y");
  BOOST_TEST(rows[0].content == std::string{abandoned_call_result});
  BOOST_TEST(abandoned_result_rows(find_pending_calls({})).empty());
}

BOOST_DATA_TEST_CASE(a_user_turn_waits_for_results_unless_it_abandons_them,
                     data::make({0, 0, 2, 2}) ^ data::make({false, true, false, true})
                       ^ data::make({user_turn_verdict::proceed, user_turn_verdict::proceed,
                                     user_turn_verdict::refuse_pending,
                                     user_turn_verdict::abandon_pending}),
                     calls, abandon, want) {
  std::vector<std::string> ids;
  for (int i = 0; i < calls; ++i)
    ids.push_back("c" + std::to_string(i));
  auto live = transcript_pending(ids);
  BOOST_TEST(decide_user_turn(find_pending_calls(live), abandon) == want);
}

BOOST_AUTO_TEST_CASE(rounds_count_the_calling_answers_since_the_last_user_message) {
  std::vector<message> live{loop_row(msg_role::user), loop_call({"o"}), loop_result("o"),
                            loop_row(msg_role::assistant, "old answer")};
  BOOST_TEST(tool_rounds_in_loop(live) == 0);
  live.push_back(loop_row(msg_role::user));
  live.push_back(loop_call({"a"}));
  BOOST_TEST(tool_rounds_in_loop(live) == 1);
  live.push_back(loop_result("a"));
  live.push_back(loop_call({"b", "c"}));
  BOOST_TEST(tool_rounds_in_loop(live) == 2);
  auto summary = loop_row(msg_role::user, "summary");
  summary.is_summary = true; // a summary is not a user message
  live.insert(live.begin() + 5, summary);
  BOOST_TEST(tool_rounds_in_loop(live) == 2);
}

BOOST_DATA_TEST_CASE(the_loop_calls_the_model_until_the_round_cap,
                     data::make({0, 1, 63, 64, 65, 1, 2})
                       ^ data::make({64, 64, 64, 64, 64, 1, 3})
                       ^ data::make({round_verdict::call_model, round_verdict::call_model,
                                     round_verdict::call_model, round_verdict::cap_reached,
                                     round_verdict::cap_reached, round_verdict::cap_reached,
                                     round_verdict::call_model}),
                     done, cap, want) {
  BOOST_TEST(decide_next_round(done, cap) == want);
}

BOOST_DATA_TEST_CASE(the_reply_reports_tool_calls_stop_or_the_upstream_limit,
                     data::make({true, true, false, false, false, false})
                       ^ data::make({"stop", "length", "stop", "length", "content_filter", ""})
                       ^ data::make({"tool_calls", "tool_calls", "stop", "length",
                                     "content_filter", "stop"}),
                     calls, upstream, want) {
  BOOST_TEST(finish_reason_of(calls, upstream) == std::string{want});
}

BOOST_AUTO_TEST_SUITE_END() // tool_loop_test
