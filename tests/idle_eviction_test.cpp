// Pins idle_compaction_pending (policies/trigger_eval.hpp): a session whose T5 idle
// compaction is still due is not evicted before its idle tick; every other session is.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "policies/compression_params.hpp"
#include "policies/threshold.hpp"
#include "policies/trigger_eval.hpp"

BOOST_AUTO_TEST_SUITE(idle_eviction_test)

namespace data = boost::unit_test::data;
using namespace mneme;

namespace {

compression_params with_idle_after(int64_t seconds) {
  compression_params p;
  p.idle_compact_after_seconds = seconds;
  return p;
}

} // namespace

BOOST_AUTO_TEST_CASE(the_idle_floor_is_the_threshold_floor_of_64000_tokens) {
  BOOST_TEST(threshold_floor_tokens == 64000);
}

// after_s, idle_ms, live_tokens, pending
BOOST_DATA_TEST_CASE(
  a_session_stays_resident_only_while_its_idle_compaction_is_due,
  data::make({3600, 3600, 3600, 3600, 3600, 0, 3600, 1}) ^
    data::make<int64_t>({0, 599000, 3599999, 3600000, 7200000, 599000, 599000, 999}) ^
    data::make<int64_t>({64000, 64000, 100000, 100000, 100000, 100000, 63999, 64000}) ^
    data::make({true, true, true, false, false, false, false, true}),
  after_s, idle_ms, live_tokens, pending) {
  auto params = with_idle_after(after_s);
  BOOST_TEST(idle_compaction_pending(params, idle_ms, live_tokens, threshold_floor_tokens) ==
             pending);
}

BOOST_AUTO_TEST_CASE(t5_off_by_default_never_holds_a_session) {
  compression_params defaults;
  BOOST_TEST(defaults.idle_compact_after_seconds == 0);
  BOOST_TEST(!idle_compaction_pending(defaults, 0, 1'000'000, threshold_floor_tokens));
}

BOOST_AUTO_TEST_SUITE_END() // idle_eviction_test
