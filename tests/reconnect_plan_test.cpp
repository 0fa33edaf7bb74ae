// Tests of the waits of a store operation that lost its database connection
// (policies/reconnect_plan.hpp) on data: doubling from the first wait, capped, and the
// budget that bounds the sum of one operation's waits.
#include <boost/test/unit_test.hpp>

#include <vector>

#include "policies/reconnect_plan.hpp"

BOOST_AUTO_TEST_SUITE(reconnect_plan_test)

using namespace mneme::policies;

namespace {

// Every wait of one operation that never reconnects.
std::vector<int64_t> waits_until_giving_up(const reconnect_limits& limits) {
  std::vector<int64_t> out;
  int64_t waited = 0;
  for (int attempt = 0; attempt < 10000; ++attempt) {
    auto w = reconnect_wait_ms(limits, attempt, waited);
    if (!w)
      break;
    out.push_back(*w);
    waited += *w;
  }
  return out;
}

} // namespace

BOOST_AUTO_TEST_CASE(waits_double_up_to_the_cap) {
  reconnect_limits limits{50, 1000, 100000};
  auto waits = waits_until_giving_up(limits);
  BOOST_REQUIRE(waits.size() >= 8);
  std::vector<int64_t> first(waits.begin(), waits.begin() + 8);
  std::vector<int64_t> expected{50, 100, 200, 400, 800, 1000, 1000, 1000};
  BOOST_TEST(first == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(the_waits_of_one_operation_never_pass_the_budget) {
  for (int64_t budget : {0, 1, 49, 50, 149, 150, 3000, 30000}) {
    reconnect_limits limits{50, 1000, budget};
    auto waits = waits_until_giving_up(limits);
    int64_t sum = 0;
    for (auto w : waits)
      sum += w;
    BOOST_TEST(sum <= budget, "budget " << budget);
    // One more wait of the next size would have passed it.
    BOOST_TEST(!reconnect_wait_ms(limits, static_cast<int>(waits.size()), sum).has_value());
  }
}

BOOST_AUTO_TEST_CASE(a_budget_of_zero_never_waits) {
  BOOST_TEST(!reconnect_wait_ms(reconnect_limits{50, 1000, 0}, 0, 0).has_value());
}

BOOST_AUTO_TEST_CASE(thirty_seconds_cover_a_restart_of_a_few_seconds) {
  auto waits = waits_until_giving_up(reconnect_limits{});
  int64_t sum = 0;
  for (auto w : waits)
    sum += w;
  BOOST_TEST(sum >= 25000);
  BOOST_TEST(sum <= 30000);
}

BOOST_AUTO_TEST_SUITE_END()
