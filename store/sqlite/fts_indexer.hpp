// Asynchronous filling of the three recall indexes (fts_words, fts_cjk,
// fts_trigram; schema versions 5 and 7). Appends do not index: the storage actor
// calls index_pending() when its mailbox is empty, paced by policies/index_pacing,
// and recall scans the rows above the lowest watermark by substring, so a
// message is findable as soon as its append is acknowledged.
//
// Invariants (kept by construction):
//   - fts_state.<index>_through = W means every message with id <= W is in that
//     index and none with id > W is. A tick inserts the rows (W, W'] into ONE
//     index and moves that index's watermark to W' in ONE write transaction, so a
//     crash leaves either the old or the new pair, never a row indexed twice or
//     skipped.
//   - fts_state.indexed_through is the lowest of the three (the same UPDATE keeps
//     it): every message with id <= it is in all three indexes.
// Message text is immutable (schema v5 aborts an UPDATE of content), so an
// indexed row never goes stale.
//
// The index vocabulary (fts_index, index_progress, ...) is store/store_maintenance.hpp's:
// the storage actor runs these ticks through sqlite_maintenance.
// Thread: the thread that owns the writer connection (the storage actor). Never
// a second writer connection.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "caf/expected.hpp"

#include "policies/index_pacing.hpp"
#include "store/store_maintenance.hpp"

namespace mneme {

class db_connection;

// One bulk batch (index_all_pending), the same as a paced tick's default run
// (policies/index_pacing.hpp): large transactions make FTS5 write few, large
// segments (figures: docs/benchmarks.md#recall).
inline constexpr int64_t fts_index_batch_rows = default_max_index_run.rows;
// Text bytes per batch: a batch stops before the row that would exceed this, but
// always takes at least one row (a single 200 KB tool output fits anyway).
inline constexpr int64_t fts_index_batch_bytes = default_max_index_run.bytes;

// "fts_words", "fts_cjk", "fts_trigram".
const char* fts_index_table(fts_index index);

// One paced tick: fills ONE index, the first of policies/index_pacing's
// index_fill_order (the index furthest behind) that takes a row, with the rows
// above its watermark in id order, in ONE IMMEDIATE transaction that also
// advances its watermark (and the lowest one). Each row goes in by its own
// single-row INSERT (FTS5 keeps the tick's rows in its pending list and writes
// them as one segment at COMMIT, or per ~1 MiB of pending data, as its own bulk
// insert does). Within that index the tick stops
//   - before a row `plan` does not allow (policies/index_pacing: a large row that
//     must wait): the index's watermark stays below it, so the rows behind it
//     wait too;
//   - before the row that would pass plan.run.bytes or plan.max_bytes (at least
//     one row), or after plan.run.rows or plan.max_rows rows;
//   - after the row during which the pages the tick spilled to the log before
//     its COMMIT reached plan.max_log_bytes (the COMMIT writes more);
//   - after any row after which `should_yield()` returns true (the caller has
//     work waiting: a request waits at most one row's indexing and the commit,
//     however long the tick would have been).
// Then it commits what it did. An index that takes no row (caught up, or its
// next row must wait) lets the tick try the next index of the order. The tick
// reports the index that took rows, else the first one that waits for a large
// row, else the first one tried (then all_caught_up). Errors: storage_* from
// SQLite; on error nothing changed (the transaction rolls back, every watermark
// is unchanged).
// REQUIRES: db is the writer, at schema version >= 7, with no open transaction;
//           plan.max_rows >= 1, plan.max_bytes >= 1.
caf::expected<index_progress> index_pending(db_connection& db, const index_tick_plan& plan,
                                            const std::function<bool()>& should_yield = {});

// One round of ticks: each index in turn (fts_index_count ticks, each of the
// index furthest behind) takes up to `max_rows` rows above its watermark (and
// about `max_bytes` of text, at least one row), large rows included, without
// yielding and without a log budget. Returns the number of messages the lowest
// watermark rose by (with equal watermarks before: the rows each index took; 0
// when nothing is pending). For tests; the storage actor and
// index_all_pending run ticks of a plan (above).
// REQUIRES: as above; max_rows >= 1, max_bytes >= 1.
caf::expected<int64_t> index_pending(db_connection& db, int64_t max_rows,
                                     int64_t max_bytes = fts_index_batch_bytes);

// Indexes everything pending, tick by tick (clean shutdown, tests, bulk loads):
// each tick is one of an idle writer under the default pacing (its row, byte
// and log bounds, its growing runs; large rows included). Returns the number of
// messages that were missing from at least one index (all of them are in all
// three after); `ticks`, when given, receives the number of transactions that
// indexed rows; `after_tick`, when given, runs after each of them has committed,
// with its progress (a writer that watches its log checkpoints there:
// checkpoint_between_ticks).
caf::expected<int64_t> index_all_pending(
  db_connection& db, int64_t* ticks = nullptr,
  const std::function<void(const index_progress&)>& after_tick = {});

// For a writer that watches its log (db_connection::watch_wal: SQLite checkpoints
// nothing in its COMMITs) with no checkpointer to ask, after a tick: the writer
// copies the log back itself past policies/wal_checkpoint's point, so indexing a
// whole backlog (the storage actor's clean shutdown) leaves the log about one
// tick long instead of the backlog's length. A failed or busy checkpoint is
// planned again after the next tick. Does nothing on a writer that does not
// watch its log.
void checkpoint_between_ticks(db_connection& db);

// The lowest watermark: the highest message id known to be in all three
// indexes. Works on a reader or the writer, inside or outside a transaction.
caf::expected<int64_t> fts_watermark(db_connection& db);

// Each index's watermark, by position (fts_index).
caf::expected<fts_index_figures> fts_index_watermarks(db_connection& db);

// Messages above the lowest watermark (the backlog recall scans by substring).
caf::expected<int64_t> fts_backlog(db_connection& db);

// Messages above each index's watermark, by position (fts_index).
caf::expected<fts_index_figures> fts_index_backlogs(db_connection& db);

} // namespace mneme
