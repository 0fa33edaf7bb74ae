// Unit tests of the soak runner's pure verdicts (policies/soak_checks).
#include <boost/test/unit_test.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/data/monomorphic.hpp>

#include "policies/soak_checks.hpp"

BOOST_AUTO_TEST_SUITE(soak_checks_test)

namespace bdata = boost::unit_test::data;
using namespace mneme::soak;

namespace {

struct window_case {
  std::vector<double> times;
  double window;
  int64_t expected;
};
std::ostream& operator<<(std::ostream& os, const window_case& c) {
  return os << c.times.size() << " events, window " << c.window;
}
const window_case window_cases[] = {
  {{}, 3600, 0},
  {{10}, 3600, 1},
  {{0, 1, 2, 3}, 3600, 4},
  {{0, 3600, 7200}, 3600, 1},            // half-open: an event at t+window is outside
  {{0, 10, 3599, 3605, 3606}, 3600, 4},  // 10..3606 holds four
  {{50, 0, 25}, 30, 2},                  // unsorted input
};

struct rss_case {
  std::string name;
  std::vector<rss_sample> samples;
  double max_growth;
  bool conclusive;
  bool plateaued;
};
std::ostream& operator<<(std::ostream& os, const rss_case& c) { return os << c.name; }

std::vector<rss_sample> ramp(int n, int64_t start, int64_t step_first_half,
                             int64_t step_second_half) {
  std::vector<rss_sample> out;
  int64_t v = start;
  for (int i = 0; i < n; ++i) {
    out.push_back({static_cast<double>(i), v});
    v += i < n / 2 ? step_first_half : step_second_half;
  }
  return out;
}

const rss_case rss_cases[] = {
  {"flat is a plateau", ramp(20, 100'000'000, 0, 0), 0.1, true, true},
  {"warm-up growth in the first half is ignored", ramp(20, 100'000'000, 10'000'000, 0), 0.1,
   true, true},
  {"steady growth in the second half is a leak", ramp(20, 100'000'000, 1'000'000, 5'000'000),
   0.1, true, false},
  {"growth just inside the bound holds", ramp(20, 100'000'000, 0, 1'000'000), 0.1, true, true},
  {"too few samples is inconclusive and holds", ramp(5, 100'000'000, 0, 50'000'000), 0.1, false,
   true},
};

} // namespace

BOOST_AUTO_TEST_CASE(the_live_bound_is_the_window_unless_the_scenario_names_one) {
  for (int64_t w : {int64_t{4096}, int64_t{8192}, int64_t{32768}, int64_t{131072},
                    int64_t{200000}, int64_t{1000000}}) {
    BOOST_TEST(window_live_bound(w, 0) == w);
    BOOST_TEST(window_live_bound(w, 5000) == 5000);
  }
}

BOOST_DATA_TEST_CASE(max_in_window_counts_the_busiest_window, bdata::make(window_cases), c) {
  BOOST_TEST(max_in_window(c.times, c.window) == c.expected);
}

BOOST_DATA_TEST_CASE(rss_plateau_judges_only_the_second_half, bdata::make(rss_cases), c) {
  auto v = check_rss_plateau(c.samples, c.max_growth);
  BOOST_TEST(v.conclusive == c.conclusive);
  BOOST_TEST(v.plateaued == c.plateaued);
}

BOOST_AUTO_TEST_CASE(rss_growth_is_measured_from_the_first_sample_of_the_second_half) {
  // t = 0..9, half = 4.5: the second half starts with t = 5 at 200 MB and peaks at 230 MB.
  std::vector<rss_sample> s;
  for (int i = 0; i < 10; ++i)
    s.push_back({static_cast<double>(i), i < 5 ? 100'000'000 : 200'000'000 + (i - 5) * 7'500'000});
  auto v = check_rss_plateau(s, 0.2);
  BOOST_TEST(v.mid_bytes == 200'000'000);
  BOOST_TEST(v.max_late_bytes == 230'000'000);
  BOOST_TEST(v.growth == 0.15, boost::test_tools::tolerance(1e-9));
  BOOST_TEST(v.plateaued);
  BOOST_TEST(!check_rss_plateau(s, 0.1).plateaued);
}

BOOST_AUTO_TEST_CASE(ledger_counts_lost_duplicated_and_altered_messages) {
  auto h = [](const char* s) { return content_hash(s); };
  std::vector<sent_record> sent = {
    {"a", h("A"), true},    // stored once: fine
    {"b", h("B"), true},    // not stored: lost
    {"c", h("C"), true},    // stored twice: duplicated
    {"d", h("D"), true},    // stored with other content: altered
    {"e", h("E"), false},   // unacknowledged, not stored: fine
    {"f", h("F"), false},   // unacknowledged, stored once: fine
    {"g", h("G"), false},   // unacknowledged, stored twice: duplicated
  };
  std::vector<stored_rows> stored = {
    {"a", {{"s1", h("A")}, {"s2", h("A")}}},   // carried into a reset's child: fine
    {"c", {{"s1", h("C")}, {"s1", h("C")}}},
    {"d", {{"s1", h("d")}}},
    {"f", {{"s1", h("F")}}},
    {"g", {{"s1", h("G")}, {"s1", h("G")}}},
    {"zz", {{"s1", h("unrelated")}}},
  };
  auto v = compare_ledger(sent, stored);
  BOOST_TEST(v.sent == 7);
  BOOST_TEST(v.acknowledged == 4);
  BOOST_TEST(v.stored == 5);
  BOOST_TEST(v.lost == 1);
  BOOST_TEST(v.duplicated == 2);
  BOOST_TEST(v.altered == 1);
  BOOST_TEST(v.examples.size() == 4u);
  BOOST_TEST(v.examples.front() == "b: acknowledged, not stored");
}

BOOST_AUTO_TEST_CASE(ledger_of_a_clean_run_has_no_findings) {
  std::vector<sent_record> sent = {{"x", content_hash("X"), true}};
  std::vector<stored_rows> stored = {{"x", {{"s1", content_hash("X")}}}};
  auto v = compare_ledger(sent, stored);
  BOOST_TEST(v.lost + v.duplicated + v.altered == 0);
  BOOST_TEST(v.examples.empty());
}

BOOST_AUTO_TEST_CASE(content_hash_is_fnv1a_64) {
  BOOST_TEST(content_hash("") == 14695981039346656037ull);
  BOOST_TEST(content_hash("a") == 12638187200555641996ull);
  BOOST_TEST(content_hash("ab") != content_hash("ba"));
}

BOOST_AUTO_TEST_SUITE_END() // soak_checks_test
