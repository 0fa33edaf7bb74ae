// policies/log_rate.hpp: at most N lines a second, the rest counted and reported by the
// next line let through; time is a variable.
#include <boost/test/unit_test.hpp>

#include "policies/log_rate.hpp"

BOOST_AUTO_TEST_SUITE(log_rate_test)

using mneme::log_rate_gate;

BOOST_AUTO_TEST_CASE(a_second_lets_n_lines_through_and_counts_the_rest) {
  log_rate_gate g{2};
  int64_t suppressed = -1;
  BOOST_TEST(g.allow(1000, suppressed));
  BOOST_TEST(suppressed == 0);
  BOOST_TEST(g.allow(1100, suppressed));
  BOOST_TEST(!g.allow(1200, suppressed));
  BOOST_TEST(!g.allow(1999, suppressed));
  BOOST_TEST(g.dropped == 2);
}

BOOST_AUTO_TEST_CASE(the_next_window_reports_what_was_left_out_then_starts_again) {
  log_rate_gate g{1};
  int64_t suppressed = -1;
  BOOST_TEST(g.allow(0, suppressed));
  BOOST_TEST(!g.allow(10, suppressed));
  BOOST_TEST(!g.allow(999, suppressed));
  BOOST_TEST(g.allow(1000, suppressed)); // a new window opens at 1 s
  BOOST_TEST(suppressed == 2);
  BOOST_TEST(!g.allow(1500, suppressed));
  BOOST_TEST(g.allow(5000, suppressed));
  BOOST_TEST(suppressed == 1);
}

BOOST_AUTO_TEST_CASE(zero_lines_a_second_logs_nothing) {
  log_rate_gate g{0};
  int64_t suppressed = -1;
  for (int64_t t = 0; t < 5000; t += 250)
    BOOST_TEST(!g.allow(t, suppressed));
  BOOST_TEST(suppressed == -1);
  BOOST_TEST(g.dropped == 20);
}

BOOST_AUTO_TEST_SUITE_END() // log_rate_test
