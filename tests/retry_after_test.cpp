// Table tests of the upstream's Retry-After as mneme reads it for its clients
// (policies/retry_after.hpp): delta-seconds, IMF-fixdate converted against the clock
// given, the cap, the forms that are dropped, and which statuses carry and pass it on.
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "policies/retry_after.hpp"

BOOST_AUTO_TEST_SUITE(retry_after_test)

using namespace mneme;

namespace {

// 1994-11-06 08:49:37 UTC, the date of RFC 9110's example.
constexpr int64_t rfc_example_unix_s = 784111777;

struct retry_after_row {
  const char* value;
  int64_t now;
  std::optional<int64_t> want;
};

const retry_after_row retry_after_rows[] = {
  {"30", 0, 30},
  {"0", 0, 0},
  {"  7\t", 0, 7},
  {"600", 0, 600},
  {"601", 0, max_retry_after_seconds},           // cut to the cap
  {"99999999999999999999999", 0, max_retry_after_seconds}, // no overflow
  {"Sun, 06 Nov 1994 08:49:37 GMT", rfc_example_unix_s - 45, 45},
  {"Sun, 06 Nov 1994 08:49:37 GMT", rfc_example_unix_s, 0},
  {"Sun, 06 Nov 1994 08:49:37 GMT", rfc_example_unix_s + 3600, 0}, // already past
  {"Sun, 06 Nov 1994 08:49:37 GMT", rfc_example_unix_s - 86400, max_retry_after_seconds},
  {"Thu, 29 Feb 2024 23:59:59 GMT", 1709251199 - 10, 10},           // a leap day
  {"Thu, 01 Jan 1970 00:00:10 GMT", 0, 10},
  {"Sunday, 06-Nov-94 08:49:37 GMT", 0, std::nullopt}, // RFC 850: dropped
  {"Sun Nov  6 08:49:37 1994", 0, std::nullopt},       // asctime: dropped
  {"Sun, 06 Nov 1994 08:49:37 UTC", 0, std::nullopt},
  {"Sun, 31 Nov 1994 08:49:37 GMT", 0, std::nullopt},  // no such day
  {"Sun, 06 Nov 1994 24:00:00 GMT", 0, std::nullopt},
  {"Xyz, 06 Nov 1994 08:49:37 GMT", 0, std::nullopt},
  {"1.5", 0, std::nullopt},
  {"-3", 0, std::nullopt},
  {"+3", 0, std::nullopt},
  {"", 0, std::nullopt},
  {"   ", 0, std::nullopt},
  {"soon", 0, std::nullopt},
};

} // namespace

BOOST_AUTO_TEST_CASE(retry_after_values_are_read_capped_or_dropped) {
  for (const auto& row : retry_after_rows) {
    auto got = retry_after_seconds(row.value, row.now);
    BOOST_TEST(got.has_value() == row.want.has_value(), "value '" << row.value << "'");
    if (got && row.want)
      BOOST_TEST(*got == *row.want, "value '" << row.value << "'");
    if (got)
      BOOST_TEST((*got >= 0 && *got <= max_retry_after_seconds)); // invariant
  }
}

BOOST_AUTO_TEST_CASE(only_429_503_and_529_carry_it_and_only_retried_statuses_pass_it_on) {
  for (int status : {429, 503, 529})
    BOOST_TEST(carries_retry_after(status), status);
  for (int status : {200, 400, 413, 500, 502, 504})
    BOOST_TEST(!carries_retry_after(status), status);
  for (int status : {429, 500, 502, 503, 504, 529})
    BOOST_TEST(passes_retry_after(status), status);
  for (int status : {200, 400, 404, 408, 409, 413, 422})
    BOOST_TEST(!passes_retry_after(status), status);
}

BOOST_AUTO_TEST_SUITE_END() // retry_after_test
