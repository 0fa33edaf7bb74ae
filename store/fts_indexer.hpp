// Asynchronous filling of the three recall indexes (fts_words, fts_cjk,
// fts_trigram; schema version 5). Appends no longer index: the storage actor calls
// index_pending() when it is idle, and recall scans the rows above the watermark
// by substring, so a message is findable as soon as its append is acknowledged.
//
// Invariant (kept by construction): fts_state.indexed_through = W means every
// message with id <= W is in all three indexes and none with id > W is. A batch
// inserts the rows (W, W'] into the three indexes and moves W to W' in ONE write
// transaction, so a crash leaves either the old or the new pair, never a row
// indexed twice or skipped. Message text is immutable (schema v5 aborts an UPDATE
// of content), so an indexed row never goes stale.
//
// Thread: the thread that owns the writer connection (the storage actor). Never
// a second writer connection.
#pragma once

#include <cstdint>

#include "caf/expected.hpp"

namespace mneme {

class db_connection;

// One idle tick's work: small enough that an append arriving behind it waits a
// few milliseconds at most (see docs/benchmarks.md, storage).
inline constexpr int64_t fts_index_batch_rows = 128;
// Text bytes per batch: a batch stops before the row that would exceed this, but
// always takes at least one row (a single 200 KB tool output is a batch alone).
inline constexpr int64_t fts_index_batch_bytes = 64 * 1024;

// Indexes up to `max_rows` messages above the watermark (and about `max_bytes` of
// text, at least one row) in one IMMEDIATE transaction and advances the
// watermark. Returns the number of rows indexed (0 when nothing is pending).
// Errors: storage_* from SQLite; on error nothing changed.
// REQUIRES: db is the writer, at schema version >= 5, with no open transaction;
//           max_rows >= 1, max_bytes >= 1.
caf::expected<int64_t> index_pending(db_connection& db, int64_t max_rows,
                                     int64_t max_bytes = fts_index_batch_bytes);

// Indexes everything pending, batch by batch (clean shutdown, tests, bulk loads).
// Returns the number of rows indexed.
caf::expected<int64_t> index_all_pending(db_connection& db);

// The watermark: the highest message id known to be in all three indexes.
// Works on a reader or the writer, inside or outside a transaction.
caf::expected<int64_t> fts_watermark(db_connection& db);

// Messages above the watermark (the backlog recall scans by substring).
caf::expected<int64_t> fts_backlog(db_connection& db);

} // namespace mneme
