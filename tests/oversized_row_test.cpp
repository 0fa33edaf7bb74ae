// Tests of the rule for a single row that cannot fit (SPEC §5.6, issue 25 item 8): the
// per-row limit as a share of the window, the marker with its head/tail excerpt (UTF-8
// safe), which rows a plan replaces (the protected head included, summaries never), and
// an assistant row whose tool calls alone are too large losing them in its marker.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <ostream>
#include <string>
#include <vector>

#include "policies/oversized_row.hpp"
#include "policies/row_replacement.hpp"
#include "policies/token_estimate.hpp"
#include "policies/utf8.hpp"
#include "tests/message_builders.hpp"

BOOST_AUTO_TEST_SUITE(oversized_row_test)

namespace data = boost::unit_test::data;
using namespace mneme;

namespace {

struct limit_case {
  int64_t window;
  double share;
  int64_t want;
};
std::ostream& operator<<(std::ostream& os, const limit_case& c) {
  return os << c.window << " x " << c.share;
}

// A stored row (id != 0) with its token estimate.
message oversized_row_of(msg_role role, std::string content, int64_t id) {
  auto m = testing::msg(role, std::move(content));
  m.id = id;
  m.token_estimate = estimate_message_tokens(m);
  return m;
}

} // namespace

BOOST_DATA_TEST_CASE(the_row_limit_is_the_share_of_the_window,
                     data::make(std::vector<limit_case>{
                       {4096, 0.5, 2048},
                       {8192, 0.5, 4096},
                       {32768, 0.5, 16384},
                       {128000, 0.5, 64000},
                       {200000, 0.5, 100000},
                       {1000000, 0.5, 500000},
                       {8192, 0.25, 2048},
                       {8192, 1.0, 8192},
                       {8191, 0.5, 4095},  // rounded down
                       {0, 0.5, 0},        // no window: no limit
                       {8192, 0.0, 0},     // no share: no limit
                       {8192, 1.5, 0},     // not a share: no limit
                     }),
                     c) {
  BOOST_TEST(max_row_tokens(c.window, c.share) == c.want);
}

BOOST_AUTO_TEST_CASE(a_row_cannot_fit_only_above_a_set_limit) {
  BOOST_TEST(row_cannot_fit(4097, 4096));
  BOOST_TEST(!row_cannot_fit(4096, 4096));
  BOOST_TEST(!row_cannot_fit(1'000'000, 0));
}

BOOST_AUTO_TEST_CASE(the_excerpt_stays_under_half_the_limit_and_at_most_4000_chars) {
  BOOST_TEST(oversized_excerpt_chars(4096) == 2048u);
  BOOST_TEST(oversized_excerpt_chars(100000) == 4000u);
  BOOST_TEST(oversized_excerpt_chars(1) == 0u);
  BOOST_TEST(oversized_excerpt_chars(0) == 0u);
}

BOOST_AUTO_TEST_CASE(the_marker_keeps_two_thirds_head_and_one_third_tail) {
  std::string text = "HEAD" + std::string(10000, 'x') + "TAIL";
  auto row = oversized_row_of(msg_role::user, text, 7);
  auto marker = oversized_row_marker(row, 300);
  BOOST_TEST(marker.find("[MESSAGE TRUNCATED - 10,008 chars; too large for the context window,"
                         " recall with search]\nHEAD") == 0u);
  BOOST_TEST(marker.find("...[9,708 chars omitted]...") != std::string::npos);
  BOOST_TEST(marker.substr(marker.size() - 4) == "TAIL");
  auto head = marker.substr(marker.find('\n') + 1, 200);
  BOOST_TEST(head == "HEAD" + std::string(196, 'x'));
  BOOST_TEST(is_oversized_row_marker(marker));
  BOOST_TEST(!is_oversized_row_marker("[OUTPUT TRUNCATED - 5 chars; recall with search]"));
}

BOOST_AUTO_TEST_CASE(the_excerpt_never_splits_a_multibyte_character) {
  std::string text;
  for (int i = 0; i < 5000; ++i)
    text += "数据库";
  auto marker = oversized_row_marker(oversized_row_of(msg_role::user, text, 1), 301);
  BOOST_TEST(marker.find("15,000 chars") != std::string::npos);
  // Valid UTF-8 all through: the code point count of the excerpt parts is exact.
  auto body = marker.substr(marker.find('\n') + 1);
  auto cut = body.find("\n...[");
  BOOST_REQUIRE(cut != std::string::npos);
  BOOST_TEST(count_code_points(body.substr(0, cut)) == 200u);
  BOOST_TEST(body.substr(0, 9) == "数据库");
  auto tail = body.substr(body.find("]...\n") + 5);
  BOOST_TEST(count_code_points(tail) == 101u);
}

BOOST_AUTO_TEST_CASE(a_plan_replaces_every_oversized_row_the_head_included_but_no_summary) {
  std::vector<message> live;
  live.push_back(oversized_row_of(msg_role::system, "You are helpful.", 1));
  live.push_back(oversized_row_of(msg_role::user, std::string(40000, 'a'), 2)); // head
  live.push_back(oversized_row_of(msg_role::assistant, "ok", 3));
  auto summary = oversized_row_of(msg_role::user, std::string(40000, 's'), 4);
  summary.is_summary = true;
  live.push_back(summary);
  live.push_back(oversized_row_of(msg_role::user, std::string(40000, 'b'), 0)); // not stored
  live.push_back(oversized_row_of(msg_role::user, std::string(16000, 'c'), 5)); // 4,000 + overhead
  live.push_back(oversized_row_of(msg_role::user, std::string(20000, 'd'), 6));
  auto plan = plan_oversized_rows(live, 4096);
  BOOST_REQUIRE_EQUAL(plan.size(), 2u);
  BOOST_TEST(plan[0].index == 1u);
  BOOST_TEST(plan[0].original_id == 2);
  BOOST_TEST(plan[1].index == 6u);
  for (const auto& r : plan) {
    BOOST_TEST(!r.drop_tool_calls);
    BOOST_TEST(r.tokens_reclaimed > 0);
    BOOST_TEST(estimate_text_tokens(r.content) <= 4096);
  }
  BOOST_TEST(plan_oversized_rows(live, 0).empty());
}

BOOST_AUTO_TEST_CASE(an_assistant_row_of_ten_thousand_tool_calls_becomes_a_marker_without_them) {
  message a;
  a.id = 9;
  a.role = msg_role::assistant;
  for (int i = 0; i < 10000; ++i)
    a.tool_calls.push_back({"call_" + std::to_string(i), "lookup", R"({"q":"row"})"});
  a.token_estimate = estimate_message_tokens(a);
  std::vector<message> live{a};
  auto plan = plan_oversized_rows(live, 4096);
  BOOST_REQUIRE_EQUAL(plan.size(), 1u);
  BOOST_TEST(plan[0].drop_tool_calls);
  BOOST_TEST(plan[0].content.find("0 chars, 10,000 tool calls") != std::string::npos);
  auto applied = apply_replacements(live, plan);
  BOOST_REQUIRE(applied.status == replace_status::applied);
  BOOST_TEST(applied.live[0].tool_calls.empty());
  BOOST_TEST(applied.live[0].is_summary);
  BOOST_TEST(applied.live[0].replaced_first_id == 9);
  BOOST_TEST(applied.live[0].token_estimate <= 4096);
  BOOST_TEST((applied.archived_ids == std::vector<int64_t>{9}));
}

BOOST_AUTO_TEST_CASE(a_row_just_under_the_limit_stays_as_it_is) {
  auto row = oversized_row_of(msg_role::user, std::string(16000, 'a'), 3);
  BOOST_REQUIRE(row.token_estimate <= 4100);
  BOOST_TEST(plan_oversized_rows({row}, row.token_estimate).empty());
  BOOST_TEST(plan_oversized_rows({row}, row.token_estimate - 1).size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END() // oversized_row_test
