// Tests of policies/index_space: whether an index tick may run given the free space of
// the database's filesystem (a table), the text it may take, and the cap after refused
// and committed transactions.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "policies/index_space.hpp"

BOOST_AUTO_TEST_SUITE(index_space_test)

namespace data = boost::unit_test::data;
using namespace mneme;

namespace {

constexpr int64_t MiB = 1024 * 1024;
constexpr int64_t unlimited = std::numeric_limits<int64_t>::max();

struct space_case {
  std::string name;
  int64_t free_bytes;
  int64_t reserve_bytes;
  int64_t backlog_rows;
  bool refused_last;
  index_space_verdict verdict;
  int64_t max_text_bytes; // checked for run only
};

std::ostream& operator<<(std::ostream& os, const space_case& c) {
  return os << c.name;
}

using v = index_space_verdict;

const std::vector<space_case> space_cases = {
  {"no backlog: idle whatever the space", 0, 64 * MiB, 0, false, v::idle, 0},
  {"no backlog after a refusal: idle", 10 * MiB, 64 * MiB, 0, true, v::idle, 0},
  {"free space unknown: run, unbounded", -1, 64 * MiB, 5, false, v::run, unlimited},
  {"free space unknown after a refusal: run (the retry delay paces it)", -1, 64 * MiB, 5,
   true, v::run, unlimited},
  {"a full disk: wait", 0, 64 * MiB, 5, false, v::wait_for_space, 0},
  {"just below the reserve: wait", 64 * MiB - 1, 64 * MiB, 5, false, v::wait_for_space, 0},
  {"at the reserve: run, one byte", 64 * MiB, 64 * MiB, 5, false, v::run, 1},
  {"above the reserve: the text the space above it holds", 64 * MiB + 160 * MiB, 64 * MiB, 5,
   false, v::run, 10 * MiB},
  {"after a refusal, at the reserve: wait", 64 * MiB, 64 * MiB, 5, true, v::wait_for_space, 0},
  {"after a refusal, below an eighth above the reserve: wait", 72 * MiB - 1, 64 * MiB, 5, true,
   v::wait_for_space, 0},
  {"after a refusal, an eighth above the reserve: run", 72 * MiB, 64 * MiB, 5, true, v::run,
   MiB / 2},
  {"no reserve: run with what is free", 32 * MiB, 0, 5, false, v::run, 2 * MiB},
  {"no reserve, a full disk: run one row (the disk refuses)", 0, 0, 5, false, v::run, 1},
  {"no reserve, a full disk after a refusal: wait", 0, 0, 5, true, v::wait_for_space, 0},
  {"a negative reserve counts as none", 16 * MiB, -5, 5, false, v::run, MiB},
};

} // namespace

BOOST_DATA_TEST_CASE(the_verdict_follows_free_space_reserve_backlog_and_refusal,
                     data::make(space_cases), c) {
  index_space_inputs in;
  in.free_bytes = c.free_bytes;
  in.reserve_bytes = c.reserve_bytes;
  in.backlog_rows = c.backlog_rows;
  in.refused_last = c.refused_last;
  auto d = decide_index_space(in);
  BOOST_TEST(static_cast<int>(d.verdict) == static_cast<int>(c.verdict), c.name);
  if (c.verdict == v::run)
    BOOST_TEST(d.max_text_bytes == c.max_text_bytes, c.name);
}

BOOST_AUTO_TEST_CASE(the_text_budget_divides_the_space_above_the_reserve) {
  index_space_inputs in;
  in.free_bytes = 100;
  in.reserve_bytes = 0;
  in.backlog_rows = 1;
  in.disk_bytes_per_text_byte = 4;
  BOOST_TEST(decide_index_space(in).max_text_bytes == 25);
  in.disk_bytes_per_text_byte = 0; // counts as 1
  BOOST_TEST(decide_index_space(in).max_text_bytes == 100);
  BOOST_TEST(index_disk_bytes_per_text_byte >= 1);
  // The default reserve holds more than one tick's log at the default pacing (24 MiB).
  BOOST_TEST(default_index_free_space_reserve_bytes > 24 * MiB);
}

BOOST_AUTO_TEST_CASE(a_refusal_halves_each_figure_down_to_the_floor) {
  index_cap cap{65536, 32 * MiB};
  cap = shrink_index_cap(cap);
  BOOST_TEST(cap.rows == 32768);
  BOOST_TEST(cap.bytes == 16 * MiB);
  int refusals = 1;
  while (cap.rows > index_cap_floor.rows || cap.bytes > index_cap_floor.bytes) {
    cap = shrink_index_cap(cap);
    ++refusals;
  }
  BOOST_TEST(cap.rows == 16);
  BOOST_TEST(cap.bytes == 64 * 1024);
  BOOST_TEST(refusals == 12); // 65,536 rows to 16: twelve halvings (bytes reach 64 KiB in 9)
  auto again = shrink_index_cap(cap);
  BOOST_TEST(again.rows == cap.rows);
  BOOST_TEST(again.bytes == cap.bytes);
  // A cap already below the floor stays; degenerate figures stay positive.
  auto small = shrink_index_cap({4, 1000});
  BOOST_TEST(small.rows == 4);
  BOOST_TEST(small.bytes == 1000);
  auto zero = shrink_index_cap({0, -3}, {0, 0});
  BOOST_TEST(zero.rows == 1);
  BOOST_TEST(zero.bytes == 1);
}

BOOST_AUTO_TEST_CASE(a_commit_doubles_each_figure_up_to_the_maximum) {
  index_cap max{65536, 32 * MiB};
  auto cap = grow_index_cap(index_cap_floor, max);
  BOOST_TEST(cap.rows == 32);
  BOOST_TEST(cap.bytes == 128 * 1024);
  for (int i = 0; i < 40; ++i)
    cap = grow_index_cap(cap, max);
  BOOST_TEST(cap.rows == max.rows);
  BOOST_TEST(cap.bytes == max.bytes);
  auto near_top = grow_index_cap({std::numeric_limits<int64_t>::max() - 1, 5},
                                 {std::numeric_limits<int64_t>::max(), 0});
  BOOST_TEST(near_top.rows == std::numeric_limits<int64_t>::max());
  BOOST_TEST(near_top.bytes == 1);
}

BOOST_AUTO_TEST_SUITE_END() // index_space_test
