// Tests of the indexer's pacing policy: the default figures, when large rows may
// be indexed (quiet writer, or committed long enough ago), the consistency of the
// plan with the due time a timer is armed for, how long a busy writer's backlog
// gathers before a tick, and degenerate parameters.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <ostream>
#include <utility>
#include <vector>

#include "policies/index_pacing.hpp"

BOOST_AUTO_TEST_SUITE(index_pacing_test)

namespace data = boost::unit_test::data;
using namespace mneme;

namespace {

constexpr int64_t all_ids = std::numeric_limits<int64_t>::max();

// Commits of rows 1-10 at t=1000, 11-20 at t=3000, 21-30 at t=7000.
std::deque<commit_mark> three_commits() {
  return {{10, 1000}, {20, 3000}, {30, 7000}};
}

struct through_case {
  const char* what;
  int64_t now;
  int64_t last_append;
  int64_t expected_through;
};

std::ostream& operator<<(std::ostream& os, const through_case& c) {
  return os << c.what;
}

const through_case through_cases[] = {
  {"a writer that never appended lets every large row go", 7000, -1, all_ids},
  {"a writer quiet for exactly 50 ms lets every large row go", 7050, 7000, all_ids},
  {"a writer quiet for 49 ms lets only the rows of old enough commits go", 7049, 7000, 10},
  {"under load a row committed exactly 5000 ms ago goes", 6000, 5999, 10},
  {"under load a row committed 4999 ms ago waits", 5999, 5998, 0},
  {"under load the rows of every commit old enough go", 8000, 7999, 20},
  {"under load all commits old enough let all their rows go", 12000, 11999, 30},
};

} // namespace

BOOST_AUTO_TEST_CASE(the_default_pacing_figures_are_pinned) {
  index_pacing_params p;
  BOOST_TEST(p.batch_rows == 65536);
  BOOST_TEST(p.batch_bytes == 32 * 1024 * 1024);
  BOOST_TEST(p.log_bytes == 24 * 1024 * 1024);
  BOOST_TEST(p.writer_cache_bytes == 16 * 1024 * 1024);
  BOOST_TEST(p.large_row_bytes == 16 * 1024);
  BOOST_TEST(p.quiet_ms == 50);
  BOOST_TEST(p.large_row_max_wait_ms == 5000);
  BOOST_TEST(p.min_run_rows == 65536);
  BOOST_TEST(p.min_run_bytes == 32 * 1024 * 1024);
  BOOST_TEST(p.max_run_rows == 65536);
  BOOST_TEST(p.max_run_bytes == 32 * 1024 * 1024);
  BOOST_TEST(p.gather_rows == 128);
  BOOST_TEST(p.gather_ms == 200);
}

// A request waits for one row and the tick's COMMIT, not for the rest of the
// tick, so the default run does not start short after an append.
BOOST_AUTO_TEST_CASE(by_default_a_tick_after_an_append_is_as_long_as_an_idle_one) {
  index_pacing_params p;
  auto after_append = plan_index_tick(p, 1000, 999, {});
  auto idle = plan_index_tick(p, 1000, -1, {});
  BOOST_TEST(after_append.run.rows == idle.max_run.rows);
  BOOST_TEST(after_append.run.bytes == idle.max_run.bytes);
  auto grown = next_index_run(after_append.run, after_append.max_run);
  BOOST_TEST(grown.rows == after_append.run.rows);
  BOOST_TEST(grown.bytes == after_append.run.bytes);
  // The tick's bounds do not cut the run short.
  BOOST_TEST(idle.max_rows >= idle.run.rows);
  BOOST_TEST(idle.max_bytes >= idle.run.bytes);
}

BOOST_AUTO_TEST_CASE(a_plan_starts_with_the_first_run_and_caps_runs_at_the_longest) {
  index_pacing_params p;
  p.min_run_rows = 10;
  p.min_run_bytes = 1000;
  p.max_run_rows = 5; // below the first run: the first run is the longest
  p.max_run_bytes = 4000;
  auto plan = plan_index_tick(p, 100, -1, {});
  BOOST_TEST(plan.run.rows == 10);
  BOOST_TEST(plan.run.bytes == 1000);
  BOOST_TEST(plan.max_run.rows == 10);
  BOOST_TEST(plan.max_run.bytes == 4000);
}

BOOST_AUTO_TEST_CASE(runs_double_until_they_reach_the_longest_run) {
  index_run_limit max_run{1024, 1024 * 1024};
  index_pacing_params p;
  p.min_run_rows = 32;
  p.min_run_bytes = 32 * 1024;
  index_run_limit run = first_index_run(p);
  std::vector<int64_t> rows{run.rows};
  for (int i = 0; i < 7; ++i) {
    run = next_index_run(run, max_run);
    rows.push_back(run.rows);
  }
  std::vector<int64_t> expected{32, 64, 128, 256, 512, 1024, 1024, 1024};
  BOOST_TEST(rows == expected, boost::test_tools::per_element());
  BOOST_TEST(run.bytes == 1024 * 1024);
}

BOOST_AUTO_TEST_CASE(run_growth_stays_within_bounds_for_degenerate_figures) {
  index_pacing_params p;
  p.min_run_rows = 0;
  p.min_run_bytes = -5;
  auto first = first_index_run(p);
  BOOST_TEST(first.rows == 1);
  BOOST_TEST(first.bytes == 1);
  auto grown = next_index_run({0, -1}, {0, 0});
  BOOST_TEST(grown.rows == 1);
  BOOST_TEST(grown.bytes == 1);
  // No overflow near the largest values.
  auto huge = std::numeric_limits<int64_t>::max();
  auto top = next_index_run({huge - 1, huge / 2 + 1}, {huge, huge});
  BOOST_TEST(top.rows == huge);
  BOOST_TEST(top.bytes == huge);
  auto odd = next_index_run({3, 5}, {7, 7});
  BOOST_TEST(odd.rows == 6);
  BOOST_TEST(odd.bytes == 7);
}

BOOST_AUTO_TEST_CASE(a_plan_carries_the_batch_bounds_and_the_large_row_size) {
  index_pacing_params p;
  p.batch_rows = 300;
  p.batch_bytes = 70000;
  p.large_row_bytes = 2000;
  p.log_bytes = 123456;
  p.writer_cache_bytes = 0;
  auto plan = plan_index_tick(p, 100, 90, {});
  BOOST_TEST(plan.max_rows == 300);
  BOOST_TEST(plan.max_bytes == 70000);
  BOOST_TEST(plan.large_row_bytes == 2000);
  BOOST_TEST(plan.max_log_bytes == 123456);
}

// The COMMIT writes the dirty pages of the writer's cache on top of what the
// tick spilled: the spill budget leaves room for them.
BOOST_AUTO_TEST_CASE(a_tick_may_spill_its_log_budget_less_the_writer_cache) {
  auto spill_budget = [](int64_t log_bytes, int64_t cache_bytes) {
    index_pacing_params p;
    p.log_bytes = log_bytes;
    p.writer_cache_bytes = cache_bytes;
    return plan_index_tick(p, 100, -1, {}).max_log_bytes;
  };
  BOOST_TEST(plan_index_tick(index_pacing_params{}, 100, -1, {}).max_log_bytes
             == 8 * 1024 * 1024); // 24 MiB of log, 16 MiB of cache
  BOOST_TEST(spill_budget(100000, 30000) == 70000);
  BOOST_TEST(spill_budget(100000, -5) == 100000); // a negative cache counts as none
  BOOST_TEST(spill_budget(100000, 100000) == 1);  // the first row that spills ends the tick
  BOOST_TEST(spill_budget(100000, 500000) == 1);
  constexpr auto lowest = std::numeric_limits<int64_t>::min();
  constexpr auto highest = std::numeric_limits<int64_t>::max();
  BOOST_TEST(spill_budget(lowest, highest) == 1); // no overflow at the extremes
  BOOST_TEST(spill_budget(highest, lowest) == highest);
}

// A tick commits after the row during which its log reached the budget.
BOOST_AUTO_TEST_CASE(a_tick_is_spent_once_its_log_reaches_the_budget) {
  index_pacing_params p;
  p.log_bytes = 8192 * 3;
  p.writer_cache_bytes = 0;
  auto plan = plan_index_tick(p, 100, -1, {});
  BOOST_TEST(!tick_log_spent(plan, 0));
  BOOST_TEST(!tick_log_spent(plan, 8192 * 3 - 1));
  BOOST_TEST(tick_log_spent(plan, 8192 * 3));
  BOOST_TEST(tick_log_spent(plan, 8192 * 300));
  index_tick_plan unbounded; // a plan made without the pacing (index_pending's batch form)
  BOOST_TEST(!tick_log_spent(unbounded, int64_t{1} << 50));
}

BOOST_DATA_TEST_CASE(large_rows_go_when_the_writer_is_quiet_or_they_waited_long_enough,
                     data::make(through_cases), c) {
  auto plan = plan_index_tick(index_pacing_params{}, c.now, c.last_append, three_commits());
  BOOST_TEST(plan.large_rows_through == c.expected_through);
}

struct row_case {
  const char* what;
  int64_t id;
  int64_t bytes;
  bool allowed;
};

std::ostream& operator<<(std::ostream& os, const row_case& c) {
  return os << c.what;
}

const row_case row_cases[] = {
  {"a small row always goes, even above the large-row bound", 50, 100, true},
  {"a row of exactly 16 KiB is not large", 50, 16 * 1024, true},
  {"a row of 16 KiB + 1 is large and waits above the bound", 50, 16 * 1024 + 1, false},
  {"a large row at the bound goes", 20, 200000, true},
  {"a large row below the bound goes", 3, 200000, true},
};

BOOST_DATA_TEST_CASE(a_row_may_be_indexed_when_small_or_within_the_large_row_bound,
                     data::make(row_cases), c) {
  index_tick_plan plan;
  plan.large_row_bytes = index_pacing_params{}.large_row_bytes;
  plan.large_rows_through = 20;
  BOOST_TEST(may_index_row(plan, c.id, c.bytes) == c.allowed);
}

struct due_case {
  const char* what;
  int64_t now;
  int64_t last_append;
  int64_t id;
  int64_t expected_due;
};

std::ostream& operator<<(std::ostream& os, const due_case& c) {
  return os << c.what;
}

const due_case due_cases[] = {
  {"a quiet writer: due now", 7100, 7000, 25, 7100},
  {"quiet soon: due 50 ms after the last append", 7010, 7000, 25, 7050},
  {"an old row under load: due 5000 ms after its commit", 5980, 5979, 5, 6000},
  {"an old row already due: now, never in the past", 6500, 6499, 5, 6500},
  {"a row above every commit counts as committed now", 7010, 7000, 99, 7050},
};

BOOST_DATA_TEST_CASE(a_deferred_large_row_is_due_at_the_earlier_of_quiet_and_max_wait,
                     data::make(due_cases), c) {
  BOOST_TEST(large_row_due_ms(index_pacing_params{}, c.now, c.last_append, three_commits(), c.id)
             == c.expected_due);
}

BOOST_AUTO_TEST_CASE(a_large_row_is_allowed_exactly_from_its_due_time_on) {
  index_pacing_params p;
  auto commits = three_commits();
  // Appends keep arriving every millisecond, so only the age rule can fire.
  for (auto [id, committed] : {std::pair<int64_t, int64_t>{5, 1000}, {15, 3000}, {25, 7000}}) {
    auto now = committed + 4990;
    auto due = large_row_due_ms(p, now, now - 1, commits, id);
    BOOST_TEST(due == committed + 5000);
    auto before = plan_index_tick(p, due - 1, due - 2, commits);
    auto at = plan_index_tick(p, due, due - 1, commits);
    BOOST_TEST(!may_index_row(before, id, 100000));
    BOOST_TEST(may_index_row(at, id, 100000));
  }
}

BOOST_AUTO_TEST_CASE(non_positive_budgets_still_let_a_tick_index_one_row) {
  index_pacing_params p;
  p.batch_rows = 0;
  p.batch_bytes = -5;
  p.large_row_bytes = 0;
  p.log_bytes = -1;
  auto plan = plan_index_tick(p, 100, -1, {});
  BOOST_TEST(plan.max_rows == 1);
  BOOST_TEST(plan.max_bytes == 1);
  BOOST_TEST(plan.large_row_bytes == 1);
  BOOST_TEST(plan.max_log_bytes == 1); // the tick ends after the first row that wrote log
  BOOST_TEST(!tick_log_spent(plan, 0));
}

struct fill_order_case {
  const char* what;
  std::array<int64_t, 3> through;
  std::array<int, 3> order;
};

std::ostream& operator<<(std::ostream& os, const fill_order_case& c) {
  return os << c.what;
}

const fill_order_case fill_order_cases[] = {
  {"all equal: position order", {7, 7, 7}, {0, 1, 2}},
  {"the last index behind goes first", {9, 9, 4}, {2, 0, 1}},
  {"fully reversed", {30, 20, 10}, {2, 1, 0}},
  {"a tie behind keeps position order", {12, 5, 5}, {1, 2, 0}},
  {"the first index ahead goes last", {50, 10, 20}, {1, 2, 0}},
  {"zero watermarks (a new file) come first", {0, 3, 0}, {0, 2, 1}},
};

BOOST_DATA_TEST_CASE(a_tick_tries_the_index_furthest_behind_first, data::make(fill_order_cases),
                     c) {
  BOOST_TEST(index_fill_order(c.through) == c.order, boost::test_tools::per_element());
}

// Ticks that each fill the first index of the order by the same number of rows
// take turns: after every three ticks all watermarks are equal again.
BOOST_AUTO_TEST_CASE(equal_ticks_take_turns_among_the_indexes) {
  std::array<int64_t, 3> through{0, 0, 0};
  std::vector<int> filled;
  for (int tick = 0; tick < 9; ++tick) {
    auto first = index_fill_order(through)[0];
    filled.push_back(first);
    through[static_cast<std::size_t>(first)] += 100;
  }
  BOOST_TEST(filled == (std::vector<int>{0, 1, 2, 0, 1, 2, 0, 1, 2}),
             boost::test_tools::per_element());
  BOOST_TEST(through == (std::array<int64_t, 3>{300, 300, 300}), boost::test_tools::per_element());
}

// The indexer caught up at t=1000 (gather_rows 128, gather_ms 200, quiet_ms 50 by
// default).
struct gather_case {
  const char* what;
  int64_t now;
  int64_t last_append;
  int64_t caught_up;
  int64_t backlog;
  int64_t expected_due;
};

std::ostream& operator<<(std::ostream& os, const gather_case& c) {
  return os << c.what;
}

const gather_case gather_cases[] = {
  {"an indexer that never caught up ticks at once", 1020, 1019, -1, 20, 1020},
  {"a writer quiet for 50 ms is indexed at once", 1150, 1100, 1000, 20, 1150},
  {"a busy writer's small backlog soon after a catch-up waits for the writer to go quiet",
   1020, 1010, 1000, 20, 1060},
  {"appends that keep coming move the quiet time on, not the catch-up's bound", 1195, 1190,
   1000, 20, 1200},
  {"gather_ms after the catch-up the tick is due", 1200, 1199, 1000, 20, 1200},
  {"a backlog of gather_rows rows is due at once", 1020, 1019, 1000, 128, 1020},
  {"a backlog one row short still gathers", 1020, 1019, 1000, 127, 1069},
};

BOOST_DATA_TEST_CASE(a_busy_writers_backlog_gathers_rows_or_time_after_a_catch_up,
                     data::make(gather_cases), c) {
  index_pacing_params p;
  BOOST_TEST(index_tick_due_ms(p, c.now, c.last_append, c.caught_up, c.backlog)
             == c.expected_due);
}

BOOST_AUTO_TEST_CASE(no_gathering_when_its_figures_are_not_positive) {
  index_pacing_params p;
  p.gather_rows = 0;
  BOOST_TEST(index_tick_due_ms(p, 1001, 1000, 1000, 1) == 1001);
  p.gather_rows = 128;
  p.gather_ms = -5; // counts as 0: the catch-up is long enough ago at once
  BOOST_TEST(index_tick_due_ms(p, 1001, 1000, 1000, 1) == 1001);
}

BOOST_AUTO_TEST_SUITE_END() // index_pacing_test
