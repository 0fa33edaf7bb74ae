// Tests of single-row replacement (SPEC §1, §6): the new row's provenance and
// pairing fields, stale-plan refusal, and the one-line text helpers.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "policies/row_replacement.hpp"
#include "policies/token_estimate.hpp"

BOOST_AUTO_TEST_SUITE(row_replacement_test)

namespace data = boost::unit_test::data;
using namespace mneme;

namespace {

std::vector<message> three_rows() {
  std::vector<message> rows(3);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i].id = static_cast<int64_t>(10 + i);
    rows[i].session_id = "s1";
    rows[i].content = std::string(400, 'a' + static_cast<char>(i));
    rows[i].timestamp_ms = 1000 + static_cast<int64_t>(i);
  }
  rows[1].role = msg_role::tool;
  rows[1].tool_call_id = "call_1";
  rows[1].tool_name = "grep";
  return rows;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_replacement_row_is_a_new_summary_row_pointing_at_its_original) {
  const auto rows = three_rows();
  const message r = replacement_row(rows[1], "[short]");
  BOOST_TEST(r.id == 0);
  BOOST_TEST(r.content == "[short]");
  BOOST_TEST(r.is_summary);
  BOOST_TEST(r.active);
  BOOST_TEST(!r.compacted);
  BOOST_TEST(r.replaced_first_id == 11);
  BOOST_TEST(r.replaced_last_id == 11);
  BOOST_TEST((r.role == msg_role::tool));
  BOOST_TEST(r.tool_call_id == "call_1");
  BOOST_TEST(r.tool_name == "grep");
  BOOST_TEST(r.timestamp_ms == 1001);
  BOOST_TEST(r.session_id == "s1");
  BOOST_TEST(r.token_estimate == estimate_message_tokens(r));
}

BOOST_AUTO_TEST_CASE(applying_replaces_the_planned_rows_and_archives_their_originals) {
  const auto rows = three_rows();
  const std::vector<row_replacement> plan{{0, 10, "[x]", reclaim_of(rows[0], "[x]")},
                                          {2, 12, "[z]", reclaim_of(rows[2], "[z]")}};
  const auto out = apply_replacements(rows, plan);
  BOOST_TEST(out.status == replace_status::applied);
  BOOST_TEST(out.archived_ids == (std::vector<int64_t>{10, 12}));
  BOOST_TEST(out.live[0].content == "[x]");
  BOOST_TEST(out.live[1].content == rows[1].content);
  BOOST_TEST(out.live[1].id == 11);
  BOOST_TEST(out.live[2].replaced_first_id == 12);
}

BOOST_AUTO_TEST_CASE(rows_appended_after_planning_do_not_make_a_plan_stale) {
  auto rows = three_rows();
  const std::vector<row_replacement> plan{{1, 11, "[y]", 1}};
  rows.push_back(rows[0]);
  rows.back().id = 13;
  const auto out = apply_replacements(rows, plan);
  BOOST_TEST(out.status == replace_status::applied);
  BOOST_TEST(out.live.size() == 4u);
}

// index, id -> a plan that no longer matches the transcript
BOOST_DATA_TEST_CASE(a_plan_naming_other_rows_is_stale_and_changes_nothing,
                     data::make<std::size_t>({1, 3, 0}) ^ data::make<int64_t>({12, 13, 0}),
                     index, id) {
  const auto rows = three_rows();
  const auto out = apply_replacements(rows, {{index, id, "[y]", 1}});
  BOOST_TEST(out.status == replace_status::stale_plan);
  BOOST_TEST(out.archived_ids.empty());
  BOOST_TEST(out.live[1].content == rows[1].content);
}

BOOST_AUTO_TEST_CASE(a_plan_out_of_index_order_is_stale) {
  const auto rows = three_rows();
  const auto out = apply_replacements(rows, {{2, 12, "[z]", 1}, {0, 10, "[x]", 1}});
  BOOST_TEST(out.status == replace_status::stale_plan);
}

BOOST_AUTO_TEST_CASE(an_empty_plan_has_nothing_to_replace) {
  const auto out = apply_replacements(three_rows(), {});
  BOOST_TEST(out.status == replace_status::nothing_to_replace);
  BOOST_TEST(out.live.size() == 3u);
}

// text, max_chars -> excerpt
BOOST_DATA_TEST_CASE(excerpts_are_one_line_and_cut_with_an_ellipsis,
                     data::make({std::string("  a \n\n b\tc  "), std::string("abcdef"),
                                 std::string("abcdef"), std::string("数据库很慢"),
                                 std::string("ab    cdef")}) ^
                         data::make<std::size_t>({10, 6, 4, 3, 4}) ^
                         data::make({std::string("a b c"), std::string("abcdef"),
                                     std::string("abc…"), std::string("数据…"),
                                     std::string("ab…")}),
                     text, max_chars, want) {
  BOOST_TEST(one_line_excerpt(text, max_chars) == want);
}

BOOST_AUTO_TEST_CASE(the_first_line_skips_blank_lines) {
  BOOST_TEST(first_line_excerpt("\n   \n  hello world \nnext", 50) == "hello world");
  BOOST_TEST(first_line_excerpt("\n \n", 50).empty());
}

BOOST_DATA_TEST_CASE(sizes_are_written_with_thousands_separators,
                     data::make<int64_t>({0, 999, 1000, 40019, 1234567}) ^
                         data::make({std::string("0"), std::string("999"), std::string("1,000"),
                                     std::string("40,019"), std::string("1,234,567")}),
                     n, want) {
  BOOST_TEST(with_thousands(n) == want);
}

BOOST_AUTO_TEST_CASE(the_reclaim_starts_from_the_rows_own_estimate_when_it_has_one) {
  auto rows = three_rows();
  const message shorter = replacement_row(rows[1], "[y]");
  BOOST_TEST(reclaim_of(rows[1], "[y]")
             == estimate_message_tokens(rows[1]) - shorter.token_estimate);  // not filled in
  rows[1].token_estimate = 1000;  // e.g. filled from API usage
  BOOST_TEST(reclaim_of(rows[1], "[y]") == 1000 - shorter.token_estimate);
}

BOOST_AUTO_TEST_SUITE_END() // row_replacement_test
