// Pacing of the background full-text indexer (store/sqlite/fts_indexer): how much one
// indexing tick of the storage actor may do, which index it fills, and whether a large
// row may go now. Pure functions of their arguments, safe from any thread; the storage
// actor and store/sqlite/fts_indexer call them on the writer's thread.
// Contract:
//   - a tick fills ONE index, the one furthest behind (index_fill_order), in one
//     transaction, and commits after its run (first_index_run, then next_index_run up
//     to max_run), after max_rows / max_bytes, or after the row during which the log it
//     spilled reaches log_bytes less the writer's cache (tick_log_spent), so a tick's
//     log stays about log_bytes whatever the rows' or the index's size;
//   - a row above large_row_bytes goes only once no append arrived for quiet_ms, or
//     large_row_max_wait_ms after its group commit (may_index_row, large_row_due_ms);
//     until then it ends its index's tick, so each watermark stays a single id;
//   - while appends keep coming, a tick that would start within gather_ms of the
//     indexer last catching up waits until the backlog gathers gather_rows rows
//     or that time is over (index_tick_due_ms): a tick's COMMIT and the index
//     segments it writes cost about as much for 2 rows as for 100, and recall
//     scans the rows still waiting (the unindexed tail);
//   - non-positive budgets are replaced by 1, so a tick can always progress.
// Figures behind the defaults: docs/benchmarks.md#recall.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <limits>

namespace mneme {

// The length of one tick's run of rows (committed together). A run ends before
// the row that would pass `bytes` (a run always takes at least one row) or
// after `rows` rows.
struct index_run_limit {
  int64_t rows = 0;
  int64_t bytes = 0;
};

// The default first and longest runs (index_pacing_params::min_run_* / max_run_*).
inline constexpr index_run_limit default_first_index_run{65536, 32 * 1024 * 1024};
inline constexpr index_run_limit default_max_index_run{65536, 32 * 1024 * 1024};

struct index_pacing_params {
  int64_t batch_rows = 65536;                 // rows per indexing transaction
  int64_t batch_bytes = 32 * 1024 * 1024;     // text bytes per transaction (>= 1 row)
  int64_t log_bytes = 24 * 1024 * 1024;       // log a tick may write, its COMMIT included (>= 1 row)
  // The writer's page cache (store/sqlite/db_connection writer_cache_kib): the COMMIT
  // writes the dirty pages still in it, up to this much, on top of the pages the
  // tick spilled before, so the tick may spill log_bytes - writer_cache_bytes
  // (at least 1 byte: the first row that spills ends the tick; a negative cache
  // counts as none).
  int64_t writer_cache_bytes = 16 * 1024 * 1024;
  int64_t large_row_bytes = 16 * 1024;        // a row above this is "large"
  int64_t quiet_ms = 50;                      // no append for this long: large rows go
  int64_t large_row_max_wait_ms = 5000;       // a large row committed this long ago goes
  int64_t min_run_rows = default_first_index_run.rows; // the run after an append
  int64_t min_run_bytes = default_first_index_run.bytes;
  int64_t max_run_rows = default_max_index_run.rows;   // runs stop growing here
  int64_t max_run_bytes = default_max_index_run.bytes;
  // Within gather_ms after the indexer caught up, a busy writer's new rows are
  // indexed once they are gather_rows, the time is over or the writer goes quiet
  // (quiet_ms); together they bound the tail recall scans to about gather_rows rows
  // or gather_ms of appends.
  int64_t gather_rows = 128;
  int64_t gather_ms = 200;
};

// The run of the tick after an append or a waiting request (and of the first
// tick). Non-positive figures are replaced by 1.
index_run_limit first_index_run(const index_pacing_params& params);

// The run of the tick after one of run `previous` that nothing waited behind:
// twice as long, at most `max_run` in each figure (values below 1 are treated as 1).
index_run_limit next_index_run(const index_run_limit& previous, const index_run_limit& max_run);

// One group commit of the writer: its last row id and when it committed, in the
// caller's clock (milliseconds, any epoch, monotonic).
struct commit_mark {
  int64_t last_id = 0;
  int64_t committed_at_ms = 0;
};

// What one tick may do.
struct index_tick_plan {
  int64_t max_rows = 0;
  int64_t max_bytes = 0;
  int64_t large_row_bytes = 0;
  // Large rows with id <= this may be indexed this tick (INT64_MAX: all of them,
  // 0: none unless a row's commit is unknown, see plan_index_tick).
  int64_t large_rows_through = 0;
  // The tick's run: it commits after this many rows / text bytes, or earlier
  // (max_rows / max_bytes, a waiting request, a large row, nothing left). The
  // caller carries the run over from the previous tick (progress.next_run).
  index_run_limit run = default_first_index_run;
  // The longest run (max_run_* of the params, never below the first run's).
  index_run_limit max_run = default_max_index_run;
  // The tick commits after the row during which its pages written to the log
  // (spilled by the page cache mid-transaction) reach this many bytes
  // (plan_index_tick: log_bytes less the writer's cache, at least 1).
  int64_t max_log_bytes = std::numeric_limits<int64_t>::max();
};

// The plan for a tick at `now_ms`. `last_append_ms` is when the last append
// arrived (< 0: never). `commits` are the group commits whose rows may still be
// unindexed, oldest first, both fields ascending (the caller drops the marks at
// or below the watermark). A row's commit time is that of the first mark with
// last_id >= its id; a row above every mark (imported, or found at start-up
// with no commit since) counts as committed now, so it waits like a new row.
// Non-positive budgets are replaced by 1 (a tick can always progress).
index_tick_plan plan_index_tick(const index_pacing_params& params, int64_t now_ms,
                                int64_t last_append_ms, const std::deque<commit_mark>& commits);

// When the next tick may start, given `backlog_rows` unindexed rows (the largest
// backlog of the three indexes) and when every index last caught up
// (`caught_up_ms`, < 0: never): `now_ms` when the writer is quiet, the backlog holds
// gather_rows rows, or gather_ms passed since the catch-up; otherwise the earlier of
// "quiet_ms after the last append" and "gather_ms after the catch-up". A commit
// that brings the backlog to gather_rows makes the caller ask again. Non-positive
// figures count as 0 (no gathering).
int64_t index_tick_due_ms(const index_pacing_params& params, int64_t now_ms,
                          int64_t last_append_ms, int64_t caught_up_ms,
                          int64_t backlog_rows);

// Whether a tick that has written `log_bytes` of log so far must commit now
// (after at least one row; the caller asks after each row).
bool tick_log_spent(const index_tick_plan& plan, int64_t log_bytes);

// Whether a row of `bytes` text with id `id` may be indexed under `plan`.
bool may_index_row(const index_tick_plan& plan, int64_t id, int64_t bytes);

// The order in which a tick tries the three recall indexes (positions 0-2 of
// `through`, each index's watermark): the one furthest behind first, ties in
// position order. The lowest watermark is where recall's tail scan starts, so
// filling the index furthest behind is what moves it; the tick tries the next
// one only when an index could take no row (caught up, or a large row that
// must wait).
std::array<int, 3> index_fill_order(const std::array<int64_t, 3>& through);

// When a deferred large row with id `id` becomes allowed at the latest (the
// caller arms a timer for it): the earlier of "quiet for quiet_ms after the last
// append" and "max wait after its commit". `now_ms` when it already is.
int64_t large_row_due_ms(const index_pacing_params& params, int64_t now_ms,
                         int64_t last_append_ms, const std::deque<commit_mark>& commits,
                         int64_t id);

} // namespace mneme
