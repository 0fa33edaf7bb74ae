// Tests of the WAL checkpoint policy (policies/wal_checkpoint.hpp): a short log is
// left alone, a long one goes to the checkpointer thread unless it is busy, the
// writer checkpoints itself past the bound or without a checkpointer (SQLite's
// own 1,000-page point and the ~64 MB bound pinned, in pages of 4 and 8 KiB).
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include "policies/wal_checkpoint.hpp"

BOOST_AUTO_TEST_SUITE(wal_checkpoint_test)

using namespace mneme;
namespace data = boost::unit_test::data;

namespace {

struct plan_case {
  int64_t wal_pages;
  bool has_checkpointer;
  bool busy;
  wal_checkpoint_action want;
};

std::ostream& operator<<(std::ostream& os, const plan_case& c) {
  return os << "pages=" << c.wal_pages << " checkpointer=" << c.has_checkpointer
            << " busy=" << c.busy << " -> " << c.want;
}

using act = wal_checkpoint_action;

const plan_case plan_cases[] = {
  {0, true, false, act::none},
  {999, true, false, act::none},
  {1000, true, false, act::background},
  {5000, true, false, act::background},
  {5000, true, true, act::none},          // the running checkpoint will get there
  {7999, true, true, act::none},
  {8000, true, true, act::inline_passive}, // the bound, whatever the other thread does
  {8000, true, false, act::inline_passive},
  {999, false, false, act::none},
  {1000, false, false, act::inline_passive}, // no checkpointer: as SQLite would
  {40000, false, true, act::inline_passive},
};

} // namespace

BOOST_DATA_TEST_CASE(the_log_goes_to_the_checkpointer_and_the_writer_keeps_the_bound,
                     data::make(plan_cases), c) {
  wal_checkpoint_params params;
  BOOST_TEST(plan_wal_checkpoint(params, c.wal_pages, c.has_checkpointer, c.busy) == c.want);
}

BOOST_AUTO_TEST_CASE(non_positive_thresholds_count_as_one_page) {
  wal_checkpoint_params params;
  params.background_pages = 0;
  params.inline_pages = -5;
  BOOST_TEST(plan_wal_checkpoint(params, 0, true, false) == act::none);
  BOOST_TEST(plan_wal_checkpoint(params, 1, true, false) == act::inline_passive);
  BOOST_TEST(plan_wal_checkpoint(params, 1, false, false) == act::inline_passive);
}

BOOST_AUTO_TEST_CASE(the_defaults_are_sqlites_checkpoint_point_and_a_64_mb_bound) {
  wal_checkpoint_params params;
  BOOST_TEST(params.background_pages == 1000);
  BOOST_TEST(params.inline_pages * 8192 == wal_inline_bound_bytes);
  BOOST_TEST(wal_inline_bound_bytes == 65536000); // ~64 MB
}

BOOST_AUTO_TEST_CASE(the_bound_stays_64_mb_at_every_page_size) {
  BOOST_TEST(wal_checkpoint_params_for(4096).inline_pages == 16000); // a file from before 8 KiB pages
  BOOST_TEST(wal_checkpoint_params_for(8192).inline_pages == 8000);  // a new file
  BOOST_TEST(wal_checkpoint_params_for(65536).inline_pages == 1000);
  BOOST_TEST(wal_checkpoint_params_for(0).inline_pages == 16000);    // unknown: SQLite's default
  BOOST_TEST(wal_checkpoint_params_for(4096).background_pages == 1000); // SQLite counts pages
}

BOOST_AUTO_TEST_SUITE_END() // wal_checkpoint_test
