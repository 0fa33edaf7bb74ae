// The indexer's retry delay after failed ticks (policies/index_retry.hpp): 1 s after the
// first failure, doubling with each failure in a row, never above 60 s.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <ostream>
#include <vector>

#include "policies/index_retry.hpp"

BOOST_AUTO_TEST_SUITE(index_retry_test)

namespace data = boost::unit_test::data;

namespace {

struct delay_case {
  int64_t failures;
  int64_t delay_ms;
};

std::ostream& operator<<(std::ostream& os, const delay_case& c) {
  return os << c.failures << " failures";
}

const std::vector<delay_case> delays{
  {1, 1000}, {2, 2000}, {3, 4000}, {4, 8000}, {5, 16000}, {6, 32000}, {7, 60000},
  {8, 60000}, {100, 60000}, {1000000, 60000}};

} // namespace

BOOST_DATA_TEST_CASE(the_delay_doubles_per_failure_up_to_a_minute, data::make(delays), c) {
  BOOST_TEST(mneme::index_retry_delay_ms(c.failures) == c.delay_ms);
}

BOOST_AUTO_TEST_SUITE_END()
