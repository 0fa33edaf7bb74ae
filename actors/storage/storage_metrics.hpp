// Counters of the storage actor's group commits: how many commits, how many rows,
// and the distribution of rows per commit; and the backlog of its idle-time
// full-text indexing. Written by the storage actor's thread
// only; read from any thread (relaxed atomics: figures, not synchronization).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include "actors/latency_histogram.hpp"
#include "actors/storage/storage_failures.hpp"

namespace mneme {

struct storage_metrics {
  // Upper bounds (inclusive) of the batch-size buckets; the last bucket is open.
  static constexpr std::array<int64_t, 7> bucket_limits{1, 4, 16, 64, 128, 256, 512};

  std::atomic<int64_t> group_commits{0};
  std::atomic<int64_t> appended_rows{0};
  std::atomic<int64_t> failed_appends{0}; // append requests answered with an error
  storage_failure_counters failures;       // failed store operations by op and errc
  std::atomic<int64_t> largest_batch{0};
  std::array<std::atomic<int64_t>, bucket_limits.size() + 1> batch_buckets{};
  // Recall indexing in idle time (store/sqlite/fts_indexer.hpp): rows committed but not
  // yet in all three full-text indexes, rows added to an index (a tick fills one
  // index, so every row counts three times once it is in all three), index ticks
  // that added rows, and the flush/index ticks the actor handled (an idle actor
  // handles none).
  std::atomic<int64_t> unindexed_rows{0};
  std::atomic<int64_t> indexed_rows{0};
  std::atomic<int64_t> index_batches{0};
  std::atomic<int64_t> ticks{0};
  // The cap of the next index transaction (policies/index_space: halved after the disk
  // refused one, doubled back after each that committed; 0 until the first tick is
  // planned), and the index ticks not run because the database's filesystem had less
  // free space than database.index_free_space_reserve_bytes.
  std::atomic<int64_t> index_cap_rows{0};
  std::atomic<int64_t> index_cap_bytes{0};
  std::atomic<int64_t> index_ticks_skipped_for_space{0};
  latency_histogram commit_latency;  // one group commit, BEGIN to durable COMMIT
  // Write-ahead log (policies/wal_checkpoint): its length after the writer's last
  // commit, checkpoints the checkpointer thread finished, and those the writer ran
  // itself (the log past its bound). All stay 0 for a file without a checkpointer
  // thread, where SQLite's own automatic checkpoint runs.
  std::atomic<int64_t> wal_pages{0};
  std::atomic<int64_t> wal_checkpoints_background{0};
  std::atomic<int64_t> wal_checkpoints_inline{0};
  // Episodic cold storage (actors/storage/storage_cold.hpp): JSONL files written,
  // writes that failed, and writes tried again for sessions whose write failed in the
  // sweep before (cold_pending_failures: the failures of the latest sweep).
  std::atomic<int64_t> cold_files_written{0};
  std::atomic<int64_t> cold_write_failures{0};
  std::atomic<int64_t> cold_retries{0};
  std::atomic<int64_t> cold_pending_failures{0};
  // Semantic memory (store/facts.hpp): puts and removes the store acknowledged.
  std::atomic<int64_t> fact_puts{0};
  std::atomic<int64_t> fact_removes{0};

  void record_commit(int64_t rows) {
    group_commits.fetch_add(1, std::memory_order_relaxed);
    appended_rows.fetch_add(rows, std::memory_order_relaxed);
    if (rows > largest_batch.load(std::memory_order_relaxed))
      largest_batch.store(rows, std::memory_order_relaxed);
    size_t i = 0;
    while (i < bucket_limits.size() && rows > bucket_limits[i])
      ++i;
    batch_buckets[i].fetch_add(1, std::memory_order_relaxed);
  }

  // Label of bucket i: "1", "2-4", ..., "257-512", ">512".
  static std::string bucket_label(size_t i) {
    if (i == bucket_limits.size())
      return ">" + std::to_string(bucket_limits.back());
    auto lo = i == 0 ? 1 : bucket_limits[i - 1] + 1;
    auto hi = bucket_limits[i];
    return lo == hi ? std::to_string(hi) : std::to_string(lo) + "-" + std::to_string(hi);
  }
};

} // namespace mneme
