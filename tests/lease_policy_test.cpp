// Tests of the lease decisions between nodes (policies/lease_policy.hpp): what a node
// does with each kind of lease row (none, its own live or expired, another node's live
// or expired, the boundary at 0 ms), the renewal period, and when a refused request is
// forwarded (never twice, never to itself, never without a URL).
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "policies/lease_policy.hpp"

BOOST_AUTO_TEST_SUITE(lease_policy_test)

using namespace mneme;
namespace data = boost::unit_test::data;

namespace {

struct lease_case {
  const char* name;
  std::optional<lease_row> row;
  lease_action want;
};

std::ostream& operator<<(std::ostream& os, const lease_case& c) {
  return os << c.name << " -> " << to_string(c.want);
}

lease_row row_of(const char* owner, int64_t remaining_ms) {
  return lease_row{owner, std::string{"http://"} + owner + ":8080", 7, remaining_ms};
}

const lease_case lease_cases[] = {
  {"no row", std::nullopt, lease_action::grant},
  {"own live row", row_of("a", 9000), lease_action::reacquire},
  {"own expired row", row_of("a", -5), lease_action::reacquire},
  {"other live row", row_of("b", 9000), lease_action::elsewhere},
  {"other row 1 ms from expiry", row_of("b", 1), lease_action::elsewhere},
  {"other row expiring now", row_of("b", 0), lease_action::take_over},
  {"other expired row", row_of("b", -20000), lease_action::take_over},
};

} // namespace

BOOST_DATA_TEST_CASE(a_node_takes_a_key_only_when_free_its_own_or_expired, data::make(lease_cases),
                     c) {
  BOOST_TEST(decide_lease(c.row, "a") == c.want);
}

BOOST_AUTO_TEST_CASE(a_node_name_is_compared_exactly) {
  // "a" and "a " are two nodes: no trimming, no case folding.
  BOOST_TEST(decide_lease(row_of("a ", 9000), "a") == lease_action::elsewhere);
  BOOST_TEST(decide_lease(row_of("A", 9000), "a") == lease_action::elsewhere);
}

BOOST_AUTO_TEST_CASE(renewal_runs_three_times_per_lease_and_never_faster_than_100_ms) {
  BOOST_TEST(lease_renew_period_ms(10000) == 3333);
  BOOST_TEST(lease_renew_period_ms(3000) == 1000);
  BOOST_TEST(lease_renew_period_ms(150) == 100);
  BOOST_TEST(lease_renew_period_ms(1) == 100);
}

BOOST_AUTO_TEST_CASE(a_request_is_forwarded_once_to_another_known_node) {
  BOOST_TEST(should_forward(false, "http://b:8080", "http://a:8080"));
  BOOST_TEST(!should_forward(true, "http://b:8080", "http://a:8080"));  // arrived forwarded
  BOOST_TEST(!should_forward(false, "", "http://a:8080"));              // owner URL unknown
  BOOST_TEST(!should_forward(false, "http://a:8080", "http://a:8080")); // itself
}

BOOST_AUTO_TEST_SUITE_END()
