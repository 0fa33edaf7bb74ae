// The background work a backend may need from the owner of its writer, offered as an
// optional capability of the store (message_store::maintenance(): null when the backend
// needs none). SQLite offers all of it (store/sqlite/sqlite_maintenance.hpp); PostgreSQL
// the deferred indexing only (store/pg/pg_indexer.hpp: its recall columns, one batch
// filling all three; it copies its own log back and keeps no cold copies).
//
//   - Deferred recall indexing: appends do not fill the full-text indexes. The owner
//     runs paced ticks when idle (policies/index_pacing.hpp), each filling one index
//     behind its watermark, until every index has caught up; recall reads the rows
//     above the lowest watermark by a scan meanwhile.
//   - Log copying: commits append to a write-ahead log that the owner has copied back
//     into the database (policies/wal_checkpoint.hpp), after its own commits or by a
//     log_checkpointer on a thread of its own.
//   - Cold copies (SPEC §7): the JSONL of every ended session, written to a folder.
//
// Thread: the store's owner, as for message_store; a log_checkpointer belongs to the
// thread it is handed to.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "caf/error.hpp"
#include "caf/expected.hpp"

#include "messages/transcript.hpp"
#include "policies/index_pacing.hpp"

namespace mneme {

// --- deferred indexing

// The recall indexes, in the position order of policies/index_pacing's index_fill_order.
enum class fts_index : int { words = 0, cjk = 1, trigram = 2 };
inline constexpr std::size_t fts_index_count = 3;

// One figure per index, by position (fts_index).
using fts_index_figures = std::array<int64_t, fts_index_count>;

// Why a paced tick stopped.
enum class index_stop {
  caught_up,     // nothing above the new watermark (at the time of the read)
  budget,        // max_rows, max_bytes or max_log_bytes reached; more may be pending
  yielded,       // should_yield() returned true after a row (nothing more was read)
  large_row_due, // the next row is large and may not go yet (see deferred_id)
};

struct index_progress {
  fts_index index = fts_index::words; // the index this tick filled
  int64_t rows = 0;        // rows indexed into it (and committed) by this tick
  int64_t bytes = 0;       // their text bytes
  int64_t index_watermark = 0; // that index's watermark after the tick
  int64_t watermark = 0;   // the lowest watermark after the tick
  // `stop` is about `index`: caught_up means nothing was above its new watermark.
  index_stop stop = index_stop::caught_up;
  // Every index had caught up (at the time of the tick's read).
  bool all_caught_up = false;
  // The large row that stopped the tick (large_row_due). When an index that
  // was tried first could take no row because of a large row, that row (the
  // older one, due first), whether or not a later index moved.
  int64_t deferred_id = 0;
  // should_yield() answered true after a row (the tick stopped there: stop is
  // `yielded`): the caller starts its next tick with the first run.
  bool waited = false;
  // The run of the next tick: plan.run grown once (next_index_run) when nothing
  // waited behind this tick, plan.run when a request did.
  index_run_limit next_run;
};

// --- log copying

// The outcome of one PASSIVE checkpoint: the log's length in pages and how many of
// them are now in the database file.
struct wal_checkpoint_result {
  int64_t log_pages = 0;
  int64_t checkpointed_pages = 0;
  bool busy = false; // another checkpoint was running: this one did nothing
};

// A connection of its own that copies the writer's log back (PASSIVE checkpoints),
// for a thread other than the writer's. Thread: one at a time.
class log_checkpointer {
public:
  virtual ~log_checkpointer() = default;
  virtual caf::expected<wal_checkpoint_result> checkpoint() = 0;
};

// --- cold copies

// Sessions written per sweep at most (the rest wait for the next sweep).
inline constexpr int64_t cold_sweep_max_sessions = 64;

struct cold_sweep_result {
  int64_t written = 0;
  int64_t failed = 0;
  caf::error first_error;  // the first failure, none when failed == 0
};

class store_maintenance {
public:
  virtual ~store_maintenance() = default;

  // True while a transaction (a group) is open on the writer: no maintenance then.
  virtual bool in_transaction() const = 0;

  // --- deferred indexing (store/sqlite/fts_indexer.hpp states each step's contract)
  // The rows above each index's watermark.
  virtual caf::expected<fts_index_figures> index_backlogs() = 0;
  // One paced tick of `plan`, stopping after any row after which should_yield()
  // answers true. On error nothing changed.
  virtual caf::expected<index_progress> index_tick(const index_tick_plan& plan,
                                                   const std::function<bool()>& should_yield) = 0;
  // Everything pending, in the ticks of an idle writer, the log copied back between
  // them when the owner watches it; the number of rows that were missing from an index.
  virtual caf::expected<int64_t> index_all() = 0;

  // --- log copying
  // The database's page size in bytes (the log is counted in pages).
  virtual caf::expected<int64_t> page_bytes() = 0;
  // From now on the backend copies nothing back on its own: the owner checkpoints
  // (checkpoint_log, or a log_checkpointer) as policies/wal_checkpoint says.
  virtual void watch_log() = 0;
  // The log's length in pages after the last commit (0 before the first after
  // watch_log()).
  virtual int64_t log_pages() const = 0;
  // True once after each commit since the last call (only a commit lengthens the log).
  virtual bool take_log_commit() = 0;
  // Makes the next take_log_commit() true (a checkpoint found another running).
  virtual void mark_log_commit() = 0;
  // A PASSIVE checkpoint on the writer: copies what no reader still needs, never waits.
  virtual caf::expected<wal_checkpoint_result> checkpoint_log() = 0;
  // After the disk refused a write: copies the whole log back and cuts its file to
  // zero bytes (waits for readers up to the busy timeout), so the log's space returns.
  virtual caf::expected<wal_checkpoint_result> truncate_log() = 0;
  // The free space, in bytes, of the filesystem that holds the database (statvfs of
  // its folder, as an unprivileged process may use it); -1 when unknown (in memory,
  // or the call failed).
  virtual int64_t free_space_bytes() const = 0;
  // A checkpointer connection of its own. Fails for a database no second connection
  // can open (an in-memory one): the owner then checkpoints inline.
  virtual caf::expected<std::unique_ptr<log_checkpointer>> open_log_checkpointer() = 0;

  // --- cold copies (store/sqlite/cold_storage.hpp)
  // The folder ended sessions go to, or "" when cold copies are off.
  virtual std::string cold_copy_folder() const = 0;
  // Writes the copies of up to `limit` ended sessions without one into `folder`; a
  // failure leaves its session for the next sweep. REQUIRES: folder is not empty.
  virtual cold_sweep_result sweep_cold_copies(const std::string& folder, int64_t limit,
                                              time_ms now) = 0;
};

} // namespace mneme
