// The storage actor's checkpoint arrangement for the recall benchmark's indexing
// runs: the writer's connection does not checkpoint inside its COMMITs; after
// each commit it plans by policies/wal_checkpoint, and a second connection on its
// own thread runs the PASSIVE checkpoints (as actors/storage/wal_checkpointer), or
// the writer runs one itself past the inline bound. Both ways a run compares
// (the indexer's ticks and FTS5's bulk insert) run under it, so each way's log is
// copied back the way the product copies it.
// Only mneme-bench links this; one writer thread uses an instance.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include <sqlite3.h>

#include "policies/wal_checkpoint.hpp"

namespace mneme::bench {

// Processor seconds of the calling thread.
double thread_cpu_seconds();

class bench_checkpointer {
public:
  // Opens a second connection to `path` (a WAL file the writer has open) and
  // starts its thread; `page_bytes` sizes the policy's thresholds.
  bench_checkpointer(const std::string& path, int64_t page_bytes);
  ~bench_checkpointer(); // waits for a running checkpoint, then closes
  bench_checkpointer(const bench_checkpointer&) = delete;
  bench_checkpointer& operator=(const bench_checkpointer&) = delete;

  // Turns SQLite's automatic checkpoint off on `writer` and follows its log's
  // length after each commit. Call once, before the writer's first commit.
  void watch(sqlite3* writer);
  // After each of the writer's COMMITs: what the storage actor does.
  void after_commit();
  // Returns once no checkpoint runs (the thread's work of a run is done).
  void wait_idle();

  int64_t background_checkpoints() const { return background_; }
  int64_t inline_checkpoints() const { return inline_; }
  double thread_seconds(); // the checkpointer thread's processor seconds so far

private:
  void run();

  wal_checkpoint_params params_;
  sqlite3* writer_ = nullptr;
  int64_t wal_pages_ = 0; // set by the writer's WAL hook
  bool committed_ = false;
  int64_t background_ = 0;
  int64_t inline_ = 0;

  sqlite3* own_ = nullptr;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool requested_ = false; // guarded by mutex_
  bool running_ = false;   // guarded by mutex_
  bool stopping_ = false;  // guarded by mutex_
  double own_seconds_ = 0; // guarded by mutex_
  std::thread thread_;
};

} // namespace mneme::bench
