// Unit tests of the soak runner's tool-loop verdicts (policies/soak_tool_checks): the
// pairing audit the fake LLM runs on every request, the every-loop-ends check against a
// known or a learned round cap, and the rounds-per-turn figures of the report.
#include <boost/test/unit_test.hpp>

#include "policies/soak_tool_checks.hpp"

BOOST_AUTO_TEST_SUITE(soak_tool_checks_test)

using namespace mneme;
using namespace mneme::soak;

namespace {

message tl_user(std::string text) {
  message m;
  m.role = msg_role::user;
  m.content = std::move(text);
  return m;
}

message tl_calls(std::vector<std::string> ids) {
  message m;
  m.role = msg_role::assistant;
  for (auto& id : ids)
    m.tool_calls.push_back({id, "run_query", "{}"});
  return m;
}

message tl_result(std::string id) {
  message m;
  m.role = msg_role::tool;
  m.tool_call_id = std::move(id);
  m.content = "rows";
  return m;
}

message tl_text(std::string text) {
  message m;
  m.role = msg_role::assistant;
  m.content = std::move(text);
  return m;
}

tool_loop_record tl_loop(int64_t rounds, loop_end end, double ms = 10) {
  return {rounds, end, ms};
}

} // namespace

BOOST_AUTO_TEST_CASE(a_paired_transcript_is_clean_whatever_the_result_order) {
  auto a = audit_tool_pairing({tl_user("q"), tl_calls({"a", "b"}), tl_result("b"),
                               tl_result("a"), tl_text("ok"), tl_user("again"),
                               tl_calls({"a"}), tl_result("a")});   // ids reused per row
  BOOST_TEST(a.clean());
}

BOOST_AUTO_TEST_CASE(a_call_without_its_result_is_an_orphan_call) {
  // Pending at the end of the request, and cut off by a user row in the middle.
  auto at_end = audit_tool_pairing({tl_user("q"), tl_calls({"a", "b"}), tl_result("a")});
  BOOST_TEST(at_end.orphan_calls == 1);
  BOOST_TEST(at_end.orphan_results == 0);
  auto cut = audit_tool_pairing({tl_user("q"), tl_calls({"a"}), tl_user("next"), tl_result("a")});
  BOOST_TEST(cut.orphan_calls == 1);
  BOOST_TEST(cut.orphan_results == 1);   // the late result answers no call of its run
}

BOOST_AUTO_TEST_CASE(a_result_without_its_call_or_twice_is_an_orphan_result) {
  auto unknown = audit_tool_pairing({tl_user("q"), tl_result("ghost"), tl_text("x")});
  BOOST_TEST(unknown.orphan_results == 1);
  BOOST_TEST(unknown.orphan_calls == 0);
  auto twice = audit_tool_pairing({tl_calls({"a"}), tl_result("a"), tl_result("a")});
  BOOST_TEST(twice.orphan_results == 1);
  auto other_row = audit_tool_pairing({tl_calls({"a"}), tl_result("a"), tl_calls({"b"}),
                                       tl_result("a"), tl_result("b")});
  BOOST_TEST(other_row.orphan_results == 1);
  BOOST_TEST(other_row.orphan_calls == 0);
  auto dup_ids = audit_tool_pairing({tl_calls({"a", "a"}), tl_result("a")});
  BOOST_TEST(dup_ids.orphan_calls == 1);
}

BOOST_AUTO_TEST_CASE(loops_that_end_by_text_cap_or_error_within_the_cap_hold) {
  auto v = check_tool_loops({tl_loop(0, loop_end::text), tl_loop(2, loop_end::text),
                             tl_loop(3, loop_end::round_cap), tl_loop(1, loop_end::error)},
                            4, 3);
  BOOST_TEST(v.ok());
  BOOST_TEST(v.loops == 4);
  BOOST_TEST(v.by_end["text"] == 2);
  BOOST_TEST(v.by_end["round_cap"] == 1);
  BOOST_TEST(v.by_end["error"] == 1);
  BOOST_TEST(v.cap_rounds == 3);
}

BOOST_AUTO_TEST_CASE(a_loop_that_never_ended_fails) {
  auto v = check_tool_loops({tl_loop(1, loop_end::text)}, 3, 3);
  BOOST_TEST(!v.ok());
  BOOST_TEST(v.unended == 2);
  BOOST_TEST(!v.examples.empty());
}

BOOST_AUTO_TEST_CASE(a_model_call_past_the_cap_or_a_cap_at_another_round_fails) {
  auto text_at_cap = check_tool_loops({tl_loop(3, loop_end::text)}, 1, 3);
  BOOST_TEST(text_at_cap.over_cap == 1);
  auto beyond = check_tool_loops({tl_loop(4, loop_end::error)}, 1, 3);
  BOOST_TEST(beyond.over_cap == 1);
  auto early_cap = check_tool_loops({tl_loop(2, loop_end::round_cap)}, 1, 3);
  BOOST_TEST(early_cap.cap_mismatch == 1);
  BOOST_TEST(!early_cap.ok());
}

BOOST_AUTO_TEST_CASE(an_unknown_cap_is_learned_from_the_first_round_cap) {
  auto agree = check_tool_loops({tl_loop(1, loop_end::text), tl_loop(5, loop_end::round_cap),
                                 tl_loop(5, loop_end::round_cap)}, 3, 0);
  BOOST_TEST(agree.ok());
  BOOST_TEST(agree.cap_rounds == 5);
  auto disagree = check_tool_loops({tl_loop(5, loop_end::round_cap),
                                    tl_loop(4, loop_end::round_cap),
                                    tl_loop(6, loop_end::text)}, 3, 0);
  BOOST_TEST(disagree.cap_mismatch == 1);
  BOOST_TEST(disagree.over_cap == 1);
  auto none = check_tool_loops({tl_loop(9, loop_end::text)}, 1, 0);   // nothing to learn
  BOOST_TEST(none.ok());
}

BOOST_AUTO_TEST_CASE(the_round_figures_count_loops_by_rounds_and_time_only_loops_with_calls) {
  std::vector<tool_loop_record> loops;
  for (int i = 0; i < 50; ++i)
    loops.push_back(tl_loop(0, loop_end::text, 1));
  for (int i = 0; i < 49; ++i)
    loops.push_back(tl_loop(1, loop_end::text, 100));
  loops.push_back(tl_loop(3, loop_end::round_cap, 900));
  auto f = tool_round_stats(loops);
  BOOST_TEST(f.loops_by_rounds[0] == 50);
  BOOST_TEST(f.loops_by_rounds[1] == 49);
  BOOST_TEST(f.loops_by_rounds[3] == 1);
  BOOST_TEST(f.mean_rounds == 0.52, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(f.p99_rounds == 1);
  BOOST_TEST(f.loops_with_calls == 50);
  BOOST_REQUIRE(f.loop_ms_p99.has_value());
  BOOST_TEST(*f.loop_ms_p50 == 100.0);
  BOOST_TEST(*f.loop_ms_p99 == 900.0);
  auto empty = tool_round_stats({});
  BOOST_TEST(!empty.loop_ms_p99.has_value());
  BOOST_TEST(empty.mean_rounds == 0.0);
}

BOOST_AUTO_TEST_SUITE_END() // soak_tool_checks_test
