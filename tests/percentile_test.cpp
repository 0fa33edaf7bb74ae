// Table tests of the one percentile (policies/percentile.hpp): the nearest-rank rule on
// a 0..1 scale, at the edges, with one sample, without samples, on unsorted input.
#include <boost/test/unit_test.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/data/monomorphic.hpp>

#include <cstdint>
#include <numeric>
#include <optional>
#include <ostream>
#include <vector>

#include "policies/percentile.hpp"

BOOST_AUTO_TEST_SUITE(percentile_test)

namespace bdata = boost::unit_test::data;
using mneme::median_or_zero;
using mneme::percentile;
using mneme::percentile_or_zero;

namespace {

struct percentile_case {
  const char* name;
  std::vector<double> values;
  double p, expected;
};
std::ostream& operator<<(std::ostream& os, const percentile_case& c) { return os << c.name; }

const std::vector<double> one_to_ten{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};

// 1, 2, ..., n.
std::vector<double> one_to(int n) {
  std::vector<double> out(static_cast<size_t>(n));
  std::iota(out.begin(), out.end(), 1.0);
  return out;
}

const percentile_case percentile_cases[] = {
  {"one sample at p 0", {5}, 0, 5},
  {"one sample at p 0.5", {5}, 0.5, 5},
  {"one sample at p 1", {5}, 1, 5},
  {"p 0 is the minimum", one_to_ten, 0, 1},
  {"a p below the first rank is the minimum", one_to_ten, 0.01, 1},
  {"p 0.1 of ten is the first", one_to_ten, 0.1, 1},
  {"just above a rank moves to the next", one_to_ten, 0.11, 2},
  {"the median of an even count is the lower middle", one_to_ten, 0.5, 5},
  {"just above the middle is the upper middle", one_to_ten, 0.51, 6},
  {"p 0.9 of ten is the ninth", one_to_ten, 0.9, 9},
  {"p 0.99 of ten is the maximum", one_to_ten, 0.99, 10},
  {"p 1 is the maximum", one_to_ten, 1, 10},
  {"the median of an odd count is the middle", {3, 1, 2}, 0.5, 2},
  {"ceil(0.34 * 3) is the second", {3, 1, 2}, 0.34, 2},
  {"unsorted input: order does not matter", {10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, 0.9, 9},
  {"unsorted input with repeats", {7, 1, 7, 3, 7, 1}, 0.5, 3},
  {"p 0.99 of 200 is the 198th", one_to(200), 0.99, 198},
  {"0.07 * 100 is rank 7 although the product is a hair above 7", one_to(100), 0.07, 7},
  {"negative and fractional samples", {-1.5, 0.25, -3}, 0.5, -1.5},
};

} // namespace

BOOST_DATA_TEST_CASE(percentile_is_the_sample_of_nearest_rank, bdata::make(percentile_cases), c) {
  auto got = percentile(c.values, c.p);
  BOOST_REQUIRE(got.has_value());
  BOOST_TEST(*got == c.expected);
}

BOOST_AUTO_TEST_CASE(no_samples_give_no_percentile_and_zero_where_a_number_is_printed) {
  BOOST_TEST(!percentile(std::vector<double>{}, 0.99).has_value());
  BOOST_TEST(!percentile(std::vector<int64_t>{}, 0).has_value());
  BOOST_TEST(percentile_or_zero(std::vector<int64_t>{}, 0.5) == 0);
  BOOST_TEST(median_or_zero(std::vector<double>{}) == 0.0);
}

BOOST_AUTO_TEST_CASE(integer_samples_give_an_integer_sample) {
  const std::vector<int64_t> us{900, 100, 500, 300, 700};
  auto p50 = percentile(us, 0.5);
  BOOST_REQUIRE(p50.has_value());
  BOOST_TEST(*p50 == 500);
  BOOST_TEST(percentile_or_zero(us, 0.2) == 100);
  BOOST_TEST(percentile_or_zero(us, 0.21) == 300);
  BOOST_TEST(median_or_zero(us) == 500);
}

BOOST_AUTO_TEST_SUITE_END()
