// The storage actor's indexing schedule: how many committed rows each recall index
// still lacks, and when the next idle-time index tick may run and how long it may be.
// policies/index_pacing makes the decisions; this unit holds the state they read (the
// group commits above the watermark, the last append, the large row every index waits
// behind, the pending timer, the next run) and applies a tick's outcome to it. No I/O
// and no clock: the caller passes steady-clock milliseconds. Owned by the storage actor
// (actors/storage/storage_actor.cpp); nothing else touches it.
//
// Invariants: each backlog >= 0; `commits` holds only marks above the lowest
// watermark, oldest first; deferred_id != 0 only while no index could move past it.
#pragma once

#include <cstdint>
#include <deque>

#include "policies/index_pacing.hpp"
#include "policies/index_space.hpp"
#include "store/store_maintenance.hpp"

namespace mneme {

// What the idle-time indexing does next.
struct index_step {
  enum class kind { idle, run, wait } what = kind::idle;
  index_tick_plan plan;  // kind::run: the tick's plan
  int64_t due_ms = 0;    // kind::wait: come back then (a large row or the gathered backlog is due)
};

class index_schedule {
 public:
  explicit index_schedule(index_pacing_params pacing = {})
    : pacing_(pacing), run_(first_index_run(pacing_)), cap_(max_cap()) {}

  // An append arrived: the next tick is a first (short) run.
  void appended(int64_t now_ms);
  // A group commit of `rows` rows (ids up to `last_id`) at `now_ms`.
  void committed(int64_t rows, int64_t last_id, int64_t now_ms);
  // The backlogs read from the file (at start, after an import).
  void set_backlogs(const fts_index_figures& backlogs) { backlogs_ = backlogs; }

  // Rows above the lowest watermark (the rows recall's tail scan reads): the largest
  // of the backlogs.
  int64_t unindexed() const;

  // The next tick at `now_ms`: idle when nothing is unindexed; wait while appends keep
  // coming and the backlog is still gathering (policies/index_pacing
  // index_tick_due_ms), or when every index waits behind a large row that is not due
  // yet; otherwise run with the plan.
  index_step next(int64_t now_ms);
  // Applies a finished tick; answers what follows it: idle (caught up), wait (the
  // large row it stopped at is not due) or run (another tick; its plan is made by
  // next() when it starts).
  index_step finished(const index_progress& done, int64_t now_ms);
  // A tick failed (nothing changed in the file): the next one waits for
  // policies/index_retry's delay, which doubles with each failure in a row; the answer
  // is that wait. A tick that finishes ends the series.
  index_step failed(int64_t now_ms);
  // A tick whose transaction the disk refused (storage_disk_full): the cap of the
  // ticks after it is halved (policies/index_space shrink_index_cap) until ticks commit
  // again; every index_commits_per_cap_doubling-th commit at a cap doubles it back. The
  // next tick comes index_shrunk_retry_ms later when the cap shrank (a smaller
  // transaction may fit); at the floor it waits as after failed(), the first retry
  // delay after `log_cut` (the log file was cut back to nothing: its space returned),
  // the doubling delay otherwise.
  index_step refused(int64_t now_ms, bool log_cut = false);

  // The cap of the next tick's transaction (rows, text bytes): the pacing's batch
  // figures, less after refusals.
  const index_cap& cap() const { return cap_; }
  // The last tick's transaction was refused and none has committed since.
  bool refused_last() const { return refused_last_; }

  // True when a timer for `due_ms` must be armed (none is pending for that time or
  // earlier); the caller then arms it. Records it as pending until next() runs at or
  // after its time.
  bool claim_timer(int64_t due_ms);

 private:
  int64_t large_row_due(int64_t now_ms) const;
  index_cap max_cap() const { return {pacing_.batch_rows, pacing_.batch_bytes}; }

  index_pacing_params pacing_;
  fts_index_figures backlogs_{};
  std::deque<commit_mark> commits_; // group commits above the watermark, oldest first
  int64_t last_append_ms_ = -1;     // -1: no append yet
  int64_t caught_up_ms_ = -1;       // when every index last caught up (-1: never)
  int64_t deferred_id_ = 0;         // the large row every index waits behind (0: none)
  int64_t timer_due_ms_ = 0;        // a timer is pending for this time (0: none)
  int64_t failures_in_a_row_ = 0;   // ticks failed since the last one that finished
  int64_t retry_due_ms_ = 0;        // after a failure: no tick before this (0: none)
  // first_index_run after an append or a waiting request, next_index_run while
  // nothing waits (policies/index_pacing).
  index_run_limit run_;
  index_cap cap_;                   // the next tick's cap (policies/index_space)
  int64_t commits_at_cap_ = 0;      // ticks committed since cap_ last changed
  bool refused_last_ = false;       // the last tick was refused, none committed since
};

} // namespace mneme
