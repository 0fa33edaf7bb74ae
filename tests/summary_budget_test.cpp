// Tests of the summary budget clamp (SPEC §3): 0.20 × tokens clamped to
// [2,000, min(10,000, 5% of the window)], including every boundary and the small
// windows where the window ceiling falls below the 2,000 floor.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <vector>
#include <limits>

#include "policies/summary_budget.hpp"
#include "policies/summary_cut.hpp"
#include "policies/token_estimate.hpp"

#include <string>

BOOST_AUTO_TEST_SUITE(summary_budget_test)

namespace data = boost::unit_test::data;
using namespace mneme;
using rule = summary_budget_rule;

namespace {

constexpr int64_t big_window = 200000; // 5% = 10,000: the absolute ceiling decides
constexpr int64_t int64_max = std::numeric_limits<int64_t>::max();

} // namespace

// Default ratio (0.20) on a 200K window: every edge of the floor, the ratio band
// and the ceiling.
BOOST_DATA_TEST_CASE(
    the_default_budget_is_a_fifth_of_the_input_clamped_to_two_and_ten_thousand,
    data::make({int64_t{0}, int64_t{1}, int64_t{9999}, int64_t{10000}, int64_t{10004},
                int64_t{10005}, int64_t{25000}, int64_t{49999}, int64_t{50000},
                int64_t{50005}, int64_t{1000000}, int64_max})
        ^ data::make({int64_t{1}, int64_t{1}, int64_t{2000}, int64_t{2000},
                      int64_t{2000}, int64_t{2001}, int64_t{5000}, int64_t{9999},
                      int64_t{10000}, int64_t{10000}, int64_t{10000}, int64_t{10000}})
        ^ data::make({rule::freed_ceiling, rule::freed_ceiling, rule::floor, rule::ratio,
                      rule::ratio,
                      rule::ratio, rule::ratio, rule::ratio, rule::absolute_ceiling,
                      rule::absolute_ceiling, rule::absolute_ceiling,
                      rule::absolute_ceiling}),
    tokens, want_tokens, want_rule) {
  auto b = compute_summary_budget(tokens, big_window);
  BOOST_TEST(b.ok());
  BOOST_TEST(b.tokens == want_tokens);
  BOOST_TEST(b.rule == want_rule);
}

// A huge input, so the ceiling decides: min(10,000, window / 20).
BOOST_DATA_TEST_CASE(
    the_ceiling_is_the_smaller_of_ten_thousand_and_five_percent_of_the_window,
    data::make({int64_t{1000000}, int64_t{200000}, int64_t{199999}, int64_t{199980},
                int64_t{100000}, int64_t{40000}, int64_t{39999}, int64_t{20000},
                int64_t{20}})
        ^ data::make({int64_t{10000}, int64_t{10000}, int64_t{9999}, int64_t{9999},
                      int64_t{5000}, int64_t{2000}, int64_t{1999}, int64_t{1000},
                      int64_t{1}})
        ^ data::make({rule::absolute_ceiling, rule::absolute_ceiling, rule::window_ceiling,
                      rule::window_ceiling, rule::window_ceiling, rule::window_ceiling,
                      rule::window_ceiling, rule::window_ceiling, rule::window_ceiling}),
    window, want_tokens, want_rule) {
  auto b = compute_summary_budget(int64_t{10000000}, window);
  BOOST_TEST(b.ok());
  BOOST_TEST(b.tokens == want_tokens);
  BOOST_TEST(b.rule == want_rule);
}

// A small input (5,000: the ratio asks 1,000, the floor raises it to 2,000, half the
// input allows 2,500) on windows around 40,000 (where 5% of the window crosses the
// 2,000 floor): below 40,000 the window ceiling wins over the floor, never an
// inverted clamp.
BOOST_DATA_TEST_CASE(
    below_a_forty_thousand_window_the_window_ceiling_wins_over_the_floor,
    data::make({int64_t{1000000}, int64_t{40020}, int64_t{40000}, int64_t{39999},
                int64_t{32000}, int64_t{8000}, int64_t{20}})
        ^ data::make({int64_t{2000}, int64_t{2000}, int64_t{2000}, int64_t{1999},
                      int64_t{1600}, int64_t{400}, int64_t{1}})
        ^ data::make({rule::floor, rule::floor, rule::floor, rule::window_ceiling,
                      rule::window_ceiling, rule::window_ceiling, rule::window_ceiling}),
    window, want_tokens, want_rule) {
  auto b = compute_summary_budget(5000, window);
  BOOST_TEST(b.ok());
  BOOST_TEST(b.tokens == want_tokens);
  BOOST_TEST(b.rule == want_rule);
  BOOST_TEST(b.tokens <= window / 20);
}

// Issue 25: the budget never exceeds what the compaction frees (half the middle), so
// the 2,000 floor gives way for small middles; the 2,333-token middle.
BOOST_DATA_TEST_CASE(
    the_budget_is_never_more_than_half_the_middle_so_the_floor_gives_way,
    data::make({int64_t{2}, int64_t{3}, int64_t{2333}, int64_t{3999}, int64_t{4000},
                int64_t{4001}, int64_t{9999}})
        ^ data::make({int64_t{1}, int64_t{1}, int64_t{1166}, int64_t{1999}, int64_t{2000},
                      int64_t{2000}, int64_t{2000}})
        ^ data::make({rule::freed_ceiling, rule::freed_ceiling, rule::freed_ceiling,
                      rule::freed_ceiling, rule::floor, rule::floor, rule::floor}),
    tokens, want_tokens, want_rule) {
  auto b = compute_summary_budget(tokens, big_window);
  BOOST_TEST(b.ok());
  BOOST_TEST(b.tokens == want_tokens);
  BOOST_TEST(b.rule == want_rule);
  BOOST_TEST(b.tokens <= std::max<int64_t>(1, tokens / 2));
}

// Issue 25 table: the budget by window size for three middles (a small one the
// floor would overshoot, a typical one, a huge one). Each cell respects the three
// caps: 10,000, 5% of the window, half the middle.
struct window_row {
  int64_t window;
  int64_t small_middle;  // middle 3,000: floor 2,000 vs half 1,500
  int64_t mid_middle;    // middle 30,000: ratio 6,000
  int64_t huge_middle;   // middle 1,000,000: ratio 200,000
};
std::ostream& operator<<(std::ostream& os, const window_row& r) {
  return os << "window " << r.window;
}

BOOST_DATA_TEST_CASE(
    the_budget_scales_with_windows_from_4k_to_1m,
    data::make(std::vector<window_row>{
      {4096, 204, 204, 204},
      {8192, 409, 409, 409},
      {32768, 1500, 1638, 1638},
      {131072, 1500, 6000, 6553},
      {200000, 1500, 6000, 10000},
      {1000000, 1500, 6000, 10000},
    }),
    row) {
  for (auto [middle, want] : {std::pair{int64_t{3000}, row.small_middle},
                              std::pair{int64_t{30000}, row.mid_middle},
                              std::pair{int64_t{1000000}, row.huge_middle}}) {
    auto b = compute_summary_budget(middle, row.window);
    BOOST_TEST_CONTEXT("middle " << middle) {
      BOOST_TEST(b.ok());
      BOOST_TEST(b.tokens == want);
      BOOST_TEST(b.tokens <= row.window / 20);
      BOOST_TEST(b.tokens <= middle / 2);
      BOOST_TEST(b.tokens <= summary_budget_ceiling_tokens);
    }
  }
}

BOOST_DATA_TEST_CASE(a_configured_target_ratio_replaces_the_default_fifth,
                     data::make({0.10, 0.20, 0.30, 0.50, 1.0})
                         ^ data::make({int64_t{2000}, int64_t{4000}, int64_t{6000},
                                       int64_t{10000}, int64_t{10000}}),
                     ratio, want_tokens) {
  auto b = compute_summary_budget(20000, big_window, ratio);
  BOOST_TEST(b.ok());
  BOOST_TEST(b.tokens == want_tokens);
}

BOOST_AUTO_TEST_CASE(the_default_target_ratio_is_one_fifth) {
  BOOST_TEST(compute_summary_budget(30000, big_window).tokens == 6000);
}

BOOST_DATA_TEST_CASE(
    bad_input_yields_no_budget_and_names_what_was_wrong,
    data::make({int64_t{-1}, int64_t{1000}, int64_t{1000}, int64_t{1000}, int64_t{1000},
                int64_t{1000}, int64_t{1000}, int64_t{1000}, int64_t{1000}})
        ^ data::make({big_window, int64_t{19}, int64_t{0}, int64_t{-200000}, big_window,
                      big_window, big_window, big_window, big_window})
        ^ data::make({0.2, 0.2, 0.2, 0.2, 0.0, -0.2, 1.01,
                      std::numeric_limits<double>::quiet_NaN(),
                      std::numeric_limits<double>::infinity()})
        ^ data::make({summary_budget_error::negative_tokens,
                      summary_budget_error::window_too_small,
                      summary_budget_error::window_too_small,
                      summary_budget_error::window_too_small,
                      summary_budget_error::bad_target_ratio,
                      summary_budget_error::bad_target_ratio,
                      summary_budget_error::bad_target_ratio,
                      summary_budget_error::bad_target_ratio,
                      summary_budget_error::bad_target_ratio}),
    tokens, window, ratio, want_error) {
  auto b = compute_summary_budget(tokens, window, ratio);
  BOOST_TEST(!b.ok());
  BOOST_TEST(b.error == want_error);
  BOOST_TEST(b.tokens == 0);
}

BOOST_AUTO_TEST_CASE(rules_and_errors_print_their_names) {
  BOOST_TEST(to_string(rule::window_ceiling) == "window_ceiling");
  BOOST_TEST(to_string(rule::absolute_ceiling) == "absolute_ceiling");
  BOOST_TEST(to_string(rule::floor) == "floor");
  BOOST_TEST(to_string(rule::ratio) == "ratio");
  BOOST_TEST(to_string(rule::freed_ceiling) == "freed_ceiling");
  BOOST_TEST(to_string(summary_budget_error::bad_target_ratio) == "bad_target_ratio");
  BOOST_TEST(to_string(summary_budget_error::none) == "none");
}

// ---- The cut of an over-long summary (SPEC §5.6, issue 25) ----------------------------------

BOOST_DATA_TEST_CASE(the_cut_limit_is_one_and_a_half_budgets,
                     data::make({int64_t{1}, int64_t{2}, int64_t{400}, int64_t{1166},
                                 int64_t{2000}, int64_t{10000}})
                         ^ data::make({int64_t{1}, int64_t{3}, int64_t{600}, int64_t{1749},
                                       int64_t{3000}, int64_t{15000}}),
                     budget, want) {
  BOOST_TEST(summary_cut_limit(budget) == want);
}

namespace {
// n lines of 40 characters (10 tokens each) plus the newlines.
std::string lines_of(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    if (i) s += '\n';
    s += std::string(40, static_cast<char>('a' + i % 26));
  }
  return s;
}
} // namespace

BOOST_AUTO_TEST_CASE(a_summary_within_the_limit_is_kept_whole) {
  auto text = lines_of(10);
  auto c = cut_summary_to_tokens(text, estimate_text_tokens(text));
  BOOST_TEST(!c.cut);
  BOOST_TEST(c.text == text);
}

BOOST_DATA_TEST_CASE(a_long_summary_is_cut_at_a_line_boundary_within_the_limit,
                     data::make({int64_t{15}, int64_t{60}, int64_t{150}, int64_t{600}}),
                     limit) {
  auto text = lines_of(200);
  auto c = cut_summary_to_tokens(text, limit);
  BOOST_TEST(c.cut);
  BOOST_TEST(c.tokens_after <= limit);
  BOOST_TEST(c.tokens_after == estimate_text_tokens(c.text));
  BOOST_TEST(text.compare(0, c.text.size(), c.text) == 0); // a prefix
  BOOST_TEST((c.text.size() == text.size() || text[c.text.size()] == '\n'));
  BOOST_TEST(c.text.size() % 41 == 40); // whole lines only
}

BOOST_AUTO_TEST_CASE(a_first_line_longer_than_the_limit_is_cut_at_a_character) {
  std::string text;
  for (int i = 0; i < 100; ++i) text += "数据";
  text += "\nsecond line";
  auto c = cut_summary_to_tokens(text, 7);
  BOOST_TEST(c.cut);
  BOOST_TEST(c.text == "数据数据数据数");
  BOOST_TEST(c.tokens_after == 7);
}

BOOST_AUTO_TEST_SUITE_END() // summary_budget_test
