// Pacing of the background full-text indexer (store/fts_indexer): how much one
// indexing tick of the storage actor may do, and whether the large rows at the
// head of the backlog may be indexed now. Pure functions of their arguments,
// safe from any thread; the storage actor calls them on its own thread.
//
// Why: an indexing tick runs on the writer's thread, so an append arriving
// during it waits. The indexer therefore checks between rows whether a request
// is waiting and commits what it has done when one is (the wait is at most one
// row's indexing). Small rows cost well under a millisecond each; a large row
// (a 20-200 KB tool output) costs tens of milliseconds in the trigram index, so
// it goes only when
//   (a) the writer has been quiet, i.e. no append arrived for `quiet_ms`, or
//   (b) it was committed at least `large_row_max_wait_ms` ago (progress: under
//       sustained load the backlog's age stays bounded; each such row then costs
//       the appends arriving during its indexing one stall).
// Each index's watermark in store/fts_indexer is a single id: a large row that
// may not go yet stops that index's tick before it, and the rows behind it wait
// (recall's tail scan finds them meanwhile).
// When a tick may run, it is bounded by `batch_rows` / `batch_bytes` and by its
// run (below): one transaction per tick, so FTS5 writes few, large segments.
// A tick fills ONE of the three indexes (index_fill_order: the one furthest
// behind), so each index's segments are as large as the whole log budget allows
// and one index's pages stay in the cache between rows (docs/benchmarks.md,
// "recall, session 14"). Inside a tick each row goes into the index by its own
// single-row statement, and the yield check runs after every row, so a request
// arriving during a tick waits for at most one row and the COMMIT, never for the
// indexing of other rows. FTS5 writes one segment per index per COMMIT (and one
// per ~1 MiB of pending data, as its own bulk insert does), so the longer the
// tick (its "run": rows and text bytes committed together), the closer its
// segments, its log writes and the merge work they cause come to a bulk insert's
// (in instructions, session 7's 16,384-row ticks at 200,000 messages: 99% of
// FTS5's bulk insert's work; session 6's 4,096-row ticks with a range INSERT:
// 97%; docs/benchmarks.md, "recall, session 7"). But the COMMIT also syncs
// (synchronous=FULL) the log the tick wrote, pages the writer's page cache
// spilled mid-tick included, and a tick's log adds to the write-ahead log beyond
// the bound of policies/wal_checkpoint until a checkpoint catches up; merges
// make the log per row grow with the index (session 7: 16,384 rows of the
// recall corpus at 200,000 messages, 2 MB cache, ~48 MB). So a tick also
// commits after the row during which the pages it spilled reach `log_bytes`
// (24 MiB) less the cache (16 MiB), whose dirty pages the COMMIT writes. That
// bounds the log the rows make to about `log_bytes`, whatever the index's or
// the rows' sizes; merges that FTS5 starts inside the COMMIT come on top, and a
// page spilled twice counts twice. `batch_rows` / `batch_bytes` are set well
// above what that budget lets the three indexes take on a large file, because
// every COMMIT writes pages the next tick writes again: ticks that the row
// bound ended wrote less log when they were longer (docs/benchmarks.md,
// "recall, session 10"). A larger log budget did not: longer transactions
// rewrite spilled pages instead ("recall, session 11").
// The run may start shorter after an append or a waiting request (`min_run_*`)
// and double after every tick that nothing waited behind, up to `max_run_*`; by
// default both are the same, because a request waits for one row, not for the
// rest of the tick.
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
  // The writer's page cache (store/db_connection writer_cache_kib): the COMMIT
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
