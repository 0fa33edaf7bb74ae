// When the single writer's write-ahead log is copied back into the database file
// (a WAL checkpoint), and by whom. Pure: the storage actor calls it after each of
// its write transactions with the log's length in pages (SQLite's WAL hook).
//
// Why: SQLite's automatic checkpoint runs inside the COMMIT that takes the log
// past 1,000 pages, on the committing thread. For mneme that thread is the only
// writer, so every append of that group waits for 4-8 MB to be copied and the
// database file to be synced: the tail of the acknowledgement latency. Instead a
// second connection on its own thread (actors/storage/wal_checkpointer) runs
// PASSIVE checkpoints, which never block the writer nor wait for readers.
//
// Bound: the log restarts from its beginning only when a write transaction
// starts after a checkpoint copied all of it. Beside a writer that keeps
// committing, a background checkpoint always ends a little behind, so the log
// grows; past `inline_pages` the writer checkpoints itself after its commit (as
// SQLite would), which copies everything committed — by then only the tail the
// checkpointer had not reached — and the log restarts. So the log stays below
// inline_pages plus one transaction's pages, plus what is committed while a
// background checkpoint that kept the writer's from running ends (storage bench:
// ~330 checkpoints by the thread, 7 by the writer, per run).
#pragma once

#include <cstdint>
#include <ostream>

namespace mneme {

// The writer's bound in bytes of log, ~64 MB: 16,000 pages at SQLite's default
// 4 KiB (files created before 8 KiB pages), 8,000 at the 8 KiB of a new file.
inline constexpr int64_t wal_inline_bound_bytes = int64_t{16000} * 4096;

struct wal_checkpoint_params {
  int64_t background_pages = 1000; // SQLite's own automatic checkpoint point, in pages as SQLite counts
  int64_t inline_pages = wal_inline_bound_bytes / 8192; // the writer's bound
};

// The params for a file of `page_bytes` pages: the same 1,000-page point, and
// the writer's bound at wal_inline_bound_bytes whatever the page size (a file
// keeps the page size it was created with). A non-positive size counts as 4,096.
wal_checkpoint_params wal_checkpoint_params_for(int64_t page_bytes);

enum class wal_checkpoint_action {
  none,       // the log is short enough, or a background checkpoint is running
  background, // ask the checkpointer thread for a PASSIVE checkpoint
  inline_passive, // the writer runs a PASSIVE checkpoint itself, now
};

const char* to_string(wal_checkpoint_action a);
std::ostream& operator<<(std::ostream& os, wal_checkpoint_action a);

// What to do after a write transaction that left the log `wal_pages` long.
// `has_checkpointer`: a checkpointer thread exists (false also after it died;
// for a file that never had one the storage actor does not watch the log and
// SQLite's own checkpoint runs instead);
// `checkpointer_busy`: it has not answered the last request yet.
// Non-positive thresholds count as 1.
wal_checkpoint_action plan_wal_checkpoint(const wal_checkpoint_params& params, int64_t wal_pages,
                                          bool has_checkpointer, bool checkpointer_busy);

} // namespace mneme
