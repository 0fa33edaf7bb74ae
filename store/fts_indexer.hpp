// Asynchronous filling of the three recall indexes (fts_words, fts_cjk,
// fts_trigram; schema version 5). Appends no longer index: the storage actor calls
// index_pending() when its mailbox is empty, paced by policies/index_pacing, and
// recall scans the rows above the watermark by substring, so a message is
// findable as soon as its append is acknowledged.
//
// Invariant (kept by construction): fts_state.indexed_through = W means every
// message with id <= W is in all three indexes and none with id > W is. A batch
// (a tick) inserts the rows (W, W'] into the three indexes and moves W to W' in ONE write
// transaction, so a crash leaves either the old or the new pair, never a row
// indexed twice or skipped. Message text is immutable (schema v5 aborts an UPDATE
// of content), so an indexed row never goes stale.
//
// Thread: the thread that owns the writer connection (the storage actor). Never
// a second writer connection.
#pragma once

#include <cstdint>
#include <functional>

#include "caf/expected.hpp"

#include "policies/index_pacing.hpp"

namespace mneme {

class db_connection;

// One bulk batch (index_all_pending), the same as a paced tick's default run
// (policies/index_pacing.hpp): large transactions make FTS5 write few, large
// segments, so the background path runs near FTS5's bulk rate (docs/benchmarks.md,
// "recall, session 7").
inline constexpr int64_t fts_index_batch_rows = default_max_index_run.rows;
// Text bytes per batch: a batch stops before the row that would exceed this, but
// always takes at least one row (a single 200 KB tool output fits anyway).
inline constexpr int64_t fts_index_batch_bytes = default_max_index_run.bytes;

// Why a paced tick stopped.
enum class index_stop {
  caught_up,     // nothing above the new watermark (at the time of the read)
  budget,        // max_rows, max_bytes or max_log_bytes reached; more may be pending
  yielded,       // should_yield() returned true after a row (nothing more was read)
  large_row_due, // the next row is large and may not go yet (see deferred_id)
};

struct index_progress {
  int64_t rows = 0;        // rows indexed (and committed) by this tick
  int64_t bytes = 0;       // their text bytes
  int64_t watermark = 0;   // the watermark after the tick
  index_stop stop = index_stop::caught_up;
  int64_t deferred_id = 0; // the large row that stopped the tick (large_row_due)
  // should_yield() answered true after a row (the tick stopped there: stop is
  // `yielded`): the caller starts its next tick with the first run.
  bool waited = false;
  // The run of the next tick: plan.run grown once (next_index_run) when nothing
  // waited behind this tick, plan.run when a request did.
  index_run_limit next_run;
};

// One paced tick: indexes the rows above the watermark in id order in ONE
// IMMEDIATE transaction that also advances the watermark. Each row goes into each
// of the three indexes by its own single-row INSERT (FTS5 keeps the tick's rows
// in its pending lists and writes them as one segment per index at COMMIT, or
// per ~1 MiB of pending data, as its own bulk insert does). The tick stops
//   - before a row `plan` does not allow (policies/index_pacing: a large row that
//     must wait): the watermark stays below it, so the rows behind it wait too;
//   - before the row that would pass plan.run.bytes or plan.max_bytes (at least
//     one row), or after plan.run.rows or plan.max_rows rows;
//   - after the row during which the pages the tick spilled to the log before
//     its COMMIT reached plan.max_log_bytes (the COMMIT writes more);
//   - after any row after which `should_yield()` returns true (the caller has
//     work waiting: a request waits at most one row's indexing and the commit,
//     however long the tick would have been).
// Then it commits what it did. Errors: storage_* from SQLite; on error nothing
// changed (the transaction rolls back, the watermark is unchanged).
// REQUIRES: db is the writer, at schema version >= 5, with no open transaction;
//           plan.max_rows >= 1, plan.max_bytes >= 1.
caf::expected<index_progress> index_pending(db_connection& db, const index_tick_plan& plan,
                                            const std::function<bool()>& should_yield = {});

// Indexes up to `max_rows` messages above the watermark (and about `max_bytes` of
// text, at least one row), large rows included, without yielding and without a
// log budget. Returns the number of rows indexed (0 when nothing is pending).
// Batches of a chosen size for tests; the storage actor and index_all_pending
// run ticks of a plan (above).
// REQUIRES: as above; max_rows >= 1, max_bytes >= 1.
caf::expected<int64_t> index_pending(db_connection& db, int64_t max_rows,
                                     int64_t max_bytes = fts_index_batch_bytes);

// Indexes everything pending, batch by batch (clean shutdown, tests, bulk loads):
// each batch is a tick of an idle writer under the default pacing (its row,
// byte and log bounds, its growing runs; large rows included). Returns the
// number of rows indexed; `batches`, when given, receives the number of
// transactions that indexed rows; `after_tick`, when given, runs after each of
// them has committed (a writer that watches its log checkpoints there:
// checkpoint_between_ticks).
caf::expected<int64_t> index_all_pending(db_connection& db, int64_t* batches = nullptr,
                                         const std::function<void()>& after_tick = {});

// For a writer that watches its log (db_connection::watch_wal: SQLite checkpoints
// nothing in its COMMITs) with no checkpointer to ask, after a tick: the writer
// copies the log back itself past policies/wal_checkpoint's point, so indexing a
// whole backlog (the storage actor's clean shutdown) leaves the log about one
// tick long instead of the backlog's length. A failed or busy checkpoint is
// planned again after the next tick. Does nothing on a writer that does not
// watch its log.
void checkpoint_between_ticks(db_connection& db);

// The watermark: the highest message id known to be in all three indexes.
// Works on a reader or the writer, inside or outside a transaction.
caf::expected<int64_t> fts_watermark(db_connection& db);

// Messages above the watermark (the backlog recall scans by substring).
caf::expected<int64_t> fts_backlog(db_connection& db);

} // namespace mneme
