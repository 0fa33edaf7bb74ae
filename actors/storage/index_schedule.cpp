// The storage actor's indexing schedule; see index_schedule.hpp.
#include "actors/storage/index_schedule.hpp"

#include <algorithm>
#include <limits>

#include "policies/index_retry.hpp"

namespace mneme {

void index_schedule::appended(int64_t now_ms) {
  last_append_ms_ = now_ms;
  run_ = first_index_run(pacing_);
}

void index_schedule::committed(int64_t rows, int64_t last_id, int64_t now_ms) {
  for (auto& n : backlogs_)
    n += rows;
  if (rows > 0)
    commits_.push_back({last_id, now_ms});
}

int64_t index_schedule::unindexed() const {
  return *std::max_element(backlogs_.begin(), backlogs_.end());
}

int64_t index_schedule::large_row_due(int64_t now_ms) const {
  return large_row_due_ms(pacing_, now_ms, last_append_ms_, commits_, deferred_id_);
}

index_step index_schedule::next(int64_t now_ms) {
  if (unindexed() <= 0)
    return {};
  if (timer_due_ms_ != 0 && now_ms >= timer_due_ms_)
    timer_due_ms_ = 0; // that timer has fired (or is about to: harmless)
  index_step step;
  if (retry_due_ms_ > now_ms) { // the last tick failed: not before its retry delay
    step.what = index_step::kind::wait;
    step.due_ms = retry_due_ms_;
    return step;
  }
  auto due = index_tick_due_ms(pacing_, now_ms, last_append_ms_, caught_up_ms_, unindexed());
  if (due > now_ms) { // appends keep coming, soon after a catch-up, and the backlog is small
    step.what = index_step::kind::wait;
    step.due_ms = due;
    return step;
  }
  step.plan = plan_index_tick(pacing_, now_ms, last_append_ms_, commits_);
  if (deferred_id_ != 0
      && !may_index_row(step.plan, deferred_id_, std::numeric_limits<int64_t>::max())) {
    // Still not due (appends kept coming): no read, just come back when it is.
    step.what = index_step::kind::wait;
    step.due_ms = large_row_due(now_ms);
    return step;
  }
  step.what = index_step::kind::run;
  step.plan.run = run_;
  step.plan.max_rows = std::max<int64_t>(1, std::min(step.plan.max_rows, cap_.rows));
  step.plan.max_bytes = std::max<int64_t>(1, std::min(step.plan.max_bytes, cap_.bytes));
  return step;
}

index_step index_schedule::failed(int64_t now_ms) {
  ++failures_in_a_row_;
  retry_due_ms_ = now_ms + index_retry_delay_ms(failures_in_a_row_);
  index_step step;
  step.what = index_step::kind::wait;
  step.due_ms = retry_due_ms_;
  return step;
}

index_step index_schedule::refused(int64_t now_ms, bool log_cut) {
  auto smaller = shrink_index_cap(cap_);
  bool shrank = smaller.rows != cap_.rows || smaller.bytes != cap_.bytes;
  cap_ = smaller;
  commits_at_cap_ = 0;
  refused_last_ = true;
  if (shrank) { // a smaller transaction may fit: soon
    failures_in_a_row_ = 0;
    retry_due_ms_ = now_ms + index_shrunk_retry_ms;
    index_step step;
    step.what = index_step::kind::wait;
    step.due_ms = retry_due_ms_;
    return step;
  }
  if (log_cut) // at the floor, but the log's space came back: the first delay
    failures_in_a_row_ = 0;
  return failed(now_ms);
}

index_step index_schedule::finished(const index_progress& done, int64_t now_ms) {
  failures_in_a_row_ = 0;
  retry_due_ms_ = 0;
  if (done.rows > 0) { // a transaction committed: the cap grows back, in steps
    if (index_cap_grows(++commits_at_cap_)) {
      cap_ = grow_index_cap(cap_, max_cap());
      commits_at_cap_ = 0;
    }
    refused_last_ = false;
  }
  auto& left = backlogs_[static_cast<std::size_t>(done.index)];
  left = done.stop == index_stop::caught_up ? 0 : std::max<int64_t>(0, left - done.rows);
  if (done.all_caught_up)
    backlogs_.fill(0);
  if (unindexed() <= 0)
    caught_up_ms_ = now_ms;
  while (!commits_.empty() && commits_.front().last_id <= done.watermark)
    commits_.pop_front();
  // Wait for a large row only when no index could move: one that did and then
  // stopped at a large row may leave another index with rows below it.
  deferred_id_ =
    done.stop == index_stop::large_row_due && done.rows == 0 ? done.deferred_id : 0;
  run_ = done.waited ? first_index_run(pacing_) : done.next_run;
  index_step step;
  if (unindexed() <= 0)
    return step;
  if (deferred_id_ != 0) {
    step.what = index_step::kind::wait;
    step.due_ms = large_row_due(now_ms);
  } else {
    step.what = index_step::kind::run;
  }
  return step;
}

bool index_schedule::claim_timer(int64_t due_ms) {
  if (timer_due_ms_ != 0 && timer_due_ms_ <= due_ms)
    return false;
  timer_due_ms_ = due_ms;
  return true;
}

} // namespace mneme
