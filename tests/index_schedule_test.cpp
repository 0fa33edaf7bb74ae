// Tests of the storage actor's indexing schedule (actors/storage/index_schedule): the
// backlogs a commit and a tick leave, when the idle-time tick runs or waits behind a
// large row, the run it carries over, and the pending-timer bookkeeping.
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <deque>

#include "actors/storage/index_schedule.hpp"

BOOST_AUTO_TEST_SUITE(index_schedule_test)

using namespace mneme;

namespace {

using kind = index_step::kind;

index_progress tick(fts_index index, int64_t rows, index_stop stop, int64_t watermark) {
  index_progress p;
  p.index = index;
  p.rows = rows;
  p.stop = stop;
  p.watermark = watermark;
  p.index_watermark = watermark;
  p.next_run = {7, 700};
  return p;
}

} // namespace

BOOST_AUTO_TEST_CASE(nothing_committed_means_no_tick) {
  index_schedule s;
  BOOST_TEST(s.unindexed() == 0);
  BOOST_TEST((s.next(1000).what == kind::idle));
}

BOOST_AUTO_TEST_CASE(a_commit_adds_its_rows_to_every_backlog) {
  index_schedule s;
  s.committed(5, 5, 1000);
  s.committed(0, 5, 1001); // an empty commit changes nothing
  BOOST_TEST(s.unindexed() == 5);
  auto step = s.next(2000);
  BOOST_TEST((step.what == kind::run));
}

BOOST_AUTO_TEST_CASE(a_tick_counts_its_rows_off_its_own_index_only) {
  index_schedule s;
  s.committed(10, 10, 1000);
  auto after = s.finished(tick(fts_index::words, 10, index_stop::caught_up, 0), 2000);
  // words caught up; cjk and trigram still lack 10 rows: another tick follows.
  BOOST_TEST(s.unindexed() == 10);
  BOOST_TEST((after.what == kind::run));
  s.finished(tick(fts_index::cjk, 4, index_stop::budget, 0), 2001);
  BOOST_TEST(s.unindexed() == 10); // trigram still lacks all ten
  auto all = tick(fts_index::trigram, 10, index_stop::caught_up, 10);
  all.all_caught_up = true;
  BOOST_TEST((s.finished(all, 2002).what == kind::idle));
  BOOST_TEST(s.unindexed() == 0);
}

BOOST_AUTO_TEST_CASE(a_backlog_never_goes_below_zero) {
  index_schedule s;
  s.committed(3, 3, 1000);
  s.finished(tick(fts_index::words, 50, index_stop::budget, 0), 2000);
  BOOST_TEST(s.unindexed() == 3); // the other two
  fts_index_figures b{0, 0, 0};
  s.set_backlogs(b);
  BOOST_TEST(s.unindexed() == 0);
}

BOOST_AUTO_TEST_CASE(a_large_row_no_index_could_pass_makes_the_tick_wait_until_due) {
  index_pacing_params pacing;
  index_schedule s{pacing};
  s.appended(1000);
  s.committed(1, 1, 1000);
  auto stuck = tick(fts_index::words, 0, index_stop::large_row_due, 0);
  stuck.deferred_id = 1;
  auto after = s.finished(stuck, 1010);
  BOOST_TEST((after.what == kind::wait));
  // Due when the writer has been quiet for quiet_ms after the last append.
  BOOST_TEST(after.due_ms == 1000 + pacing.quiet_ms);
  BOOST_TEST((s.next(1020).what == kind::wait)); // still not due: no read
  BOOST_TEST((s.next(1000 + pacing.quiet_ms).what == kind::run));
}

BOOST_AUTO_TEST_CASE(a_large_row_after_progress_does_not_hold_the_other_indexes) {
  index_schedule s;
  s.committed(5, 5, 1000);
  auto moved = tick(fts_index::words, 2, index_stop::large_row_due, 0);
  moved.deferred_id = 3;
  BOOST_TEST((s.finished(moved, 1010).what == kind::run));
}

BOOST_AUTO_TEST_CASE(the_run_grows_while_nothing_waits_and_restarts_after_an_append) {
  index_pacing_params pacing;
  index_schedule s{pacing};
  s.committed(100, 100, 1000);
  auto first = s.next(1000).plan.run;
  BOOST_TEST(first.rows == first_index_run(pacing).rows);
  s.finished(tick(fts_index::words, 1, index_stop::budget, 0), 1001);
  BOOST_TEST(s.next(1002).plan.run.rows == 7); // the tick's next_run carried over
  s.appended(1003);
  BOOST_TEST(s.next(1004).plan.run.rows == first_index_run(pacing).rows);
  auto waited = tick(fts_index::cjk, 1, index_stop::yielded, 0);
  waited.waited = true;
  s.finished(waited, 1005);
  BOOST_TEST(s.next(1006).plan.run.rows == first_index_run(pacing).rows);
}

namespace {

// Commits row 1 at t=900 and indexes it into all three indexes at t=905.
void catch_up_at_905(index_schedule& s) {
  s.appended(900);
  s.committed(1, 1, 900);
  BOOST_TEST((s.next(900).what == kind::run)); // never caught up before: at once
  auto all = tick(fts_index::trigram, 1, index_stop::caught_up, 1);
  all.all_caught_up = true;
  BOOST_TEST((s.finished(all, 905).what == kind::idle));
}

} // namespace

BOOST_AUTO_TEST_CASE(a_busy_writers_small_backlog_waits_until_it_gathered_enough) {
  index_pacing_params pacing;
  pacing.gather_rows = 10;
  pacing.gather_ms = 200;
  index_schedule s{pacing};
  catch_up_at_905(s);
  s.appended(1000);
  s.committed(4, 5, 1000);
  auto step = s.next(1010);
  BOOST_TEST((step.what == kind::wait));
  BOOST_TEST(step.due_ms == 1000 + pacing.quiet_ms); // quiet from then on: due
  s.appended(1040);
  s.committed(4, 9, 1040);
  step = s.next(1045);
  BOOST_TEST((step.what == kind::wait));
  BOOST_TEST(step.due_ms == 1040 + pacing.quiet_ms);
  s.appended(1080);
  s.committed(2, 11, 1080); // 10 rows: gathered
  BOOST_TEST((s.next(1081).what == kind::run));
}

BOOST_AUTO_TEST_CASE(a_gathering_backlog_is_due_gather_ms_after_the_catch_up) {
  index_pacing_params pacing;
  pacing.gather_rows = 1000;
  index_schedule s{pacing};
  catch_up_at_905(s);
  for (int64_t t = 910; t < 905 + pacing.gather_ms; t += 20) {
    s.appended(t);
    s.committed(1, (t - 910) / 20 + 2, t);
    BOOST_TEST((s.next(t + 1).what == kind::wait));
  }
  s.appended(905 + pacing.gather_ms);
  BOOST_TEST((s.next(905 + pacing.gather_ms).what == kind::run));
}

BOOST_AUTO_TEST_CASE(a_timer_is_armed_once_per_due_time_until_it_fires) {
  index_schedule s;
  s.committed(1, 1, 1000);
  BOOST_TEST(s.claim_timer(5000));
  BOOST_TEST(!s.claim_timer(5000)); // one is pending for that time
  BOOST_TEST(!s.claim_timer(6000)); // and it comes earlier
  BOOST_TEST(s.claim_timer(4000));  // an earlier one is armed
  s.next(4000);                     // the 4000 timer fired
  BOOST_TEST(s.claim_timer(6000));
}

BOOST_AUTO_TEST_CASE(a_failed_tick_waits_a_doubling_delay_and_a_finished_one_ends_it) {
  index_schedule s;
  s.committed(100, 100, 1000);
  BOOST_TEST((s.next(1000).what == kind::run));
  auto first = s.failed(1000); // e.g. the disk is full
  BOOST_TEST((first.what == kind::wait));
  BOOST_TEST(first.due_ms == 2000);
  BOOST_TEST((s.next(1999).what == kind::wait)); // a commit meanwhile runs no tick
  BOOST_TEST(s.next(1999).due_ms == 2000);
  BOOST_TEST((s.next(2000).what == kind::run));
  BOOST_TEST(s.failed(2000).due_ms == 4000);
  BOOST_TEST(s.failed(4000).due_ms == 8000);
  BOOST_TEST(s.unindexed() == 100); // a failure changes no backlog
  BOOST_TEST((s.next(8000).what == kind::run)); // space returned: the tick goes through
  s.finished(tick(fts_index::words, 10, index_stop::budget, 0), 8001);
  BOOST_TEST((s.next(8002).what == kind::run)); // no delay left
  BOOST_TEST(s.failed(8002).due_ms == 9002);    // a new series starts at 1 s
}

BOOST_AUTO_TEST_CASE(a_refused_tick_halves_the_cap_to_its_floor_and_committed_ones_double_it_back) {
  index_pacing_params pacing;
  pacing.batch_rows = 1024;
  pacing.batch_bytes = 1 << 20;
  index_schedule s{pacing};
  s.committed(5000, 5000, 1000);
  auto plan = s.next(1000).plan;
  BOOST_TEST(plan.max_rows == 1024);
  BOOST_TEST(plan.max_bytes == 1 << 20);
  BOOST_TEST(!s.refused_last());

  auto retry = s.refused(1000); // the disk refused the transaction
  BOOST_TEST(s.refused_last());
  BOOST_TEST(s.cap().rows == 512);
  BOOST_TEST(s.cap().bytes == 512 * 1024);
  BOOST_TEST(retry.due_ms == 1000 + index_shrunk_retry_ms);
  plan = s.next(2000).plan; // the next tick is half as long
  BOOST_TEST(plan.max_rows == 512);
  BOOST_TEST(plan.max_bytes == 512 * 1024);
  // While the cap still shrinks, a smaller transaction may fit: each retry comes soon.
  BOOST_TEST(s.refused(2000).due_ms == 2000 + index_shrunk_retry_ms);
  BOOST_TEST(s.refused(3000).due_ms == 3000 + index_shrunk_retry_ms);
  BOOST_TEST(s.cap().rows == 128);
  for (int64_t t = 4000; s.cap().rows > index_cap_floor.rows || s.cap().bytes > index_cap_floor.bytes;
       t += 1000)
    s.refused(t);
  BOOST_TEST(s.cap().rows == index_cap_floor.rows);
  BOOST_TEST(s.cap().bytes == index_cap_floor.bytes);
  // At the floor, the delay doubles again.
  auto at_floor = s.refused(20000);
  auto later = s.refused(at_floor.due_ms);
  BOOST_TEST(later.due_ms - at_floor.due_ms == 2 * (at_floor.due_ms - 20000));
  // Unless the log was cut back after the refusal: its space returned, the first delay.
  BOOST_TEST(s.refused(50000, true).due_ms == 51000);

  s.finished(tick(fts_index::words, 16, index_stop::budget, 0), 100000); // a tick commits
  BOOST_TEST(!s.refused_last());
  // The cap that committed is kept for a few commits before it doubles.
  BOOST_TEST(s.cap().rows == index_cap_floor.rows);
  for (int i = 1; i < index_commits_per_cap_doubling; ++i) {
    BOOST_TEST(s.cap().rows == index_cap_floor.rows);
    s.finished(tick(fts_index::words, 16, index_stop::budget, 0), 100000 + i);
  }
  BOOST_TEST(s.cap().rows == 32);
  BOOST_TEST(s.cap().bytes == 128 * 1024);
  plan = s.next(100010).plan;
  BOOST_TEST(plan.max_rows == 32);
  // A refusal at the doubled cap halves it and starts the count again.
  s.refused(100020);
  BOOST_TEST(s.cap().rows == 16);
  s.finished(tick(fts_index::words, 16, index_stop::budget, 0), 100030);
  BOOST_TEST(s.cap().rows == 16);
  // A tick that committed nothing does not count.
  for (int i = 0; i < 10; ++i)
    s.finished(tick(fts_index::words, 0, index_stop::budget, 0), 100040 + i);
  BOOST_TEST(s.cap().rows == 16);
  for (int i = 0; i < 40; ++i)
    s.finished(tick(fts_index::words, 1, index_stop::budget, 0), 100100 + i);
  BOOST_TEST(s.cap().rows == 1024); // back to the pacing's cap, not beyond
  BOOST_TEST(s.cap().bytes == 1 << 20);
  s.finished(tick(fts_index::words, 0, index_stop::caught_up, 0), 200000);
  BOOST_TEST(s.cap().rows == 1024);
}

BOOST_AUTO_TEST_SUITE_END() // index_schedule_test
