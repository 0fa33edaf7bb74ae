// Deferred recall indexing on PostgreSQL (issue 46; schema v12, store/pg/pg_schema.cpp):
// an append writes its row with the three recall columns NULL (pg_search_columns.hpp
// says what they hold); this indexer fills them in bounded batches, each batch in a
// transaction of its own on the writer's connection, when the storage actor is idle
// (the store_maintenance hooks it drives for SQLite's FTS5 indexer). Recall reads the
// rows still NULL by a scan (store/pg/pg_recall.hpp, route "unindexed_tail"), so an
// acknowledged row is findable at once.
//
// Invariants:
//   - A row's recall columns are all NULL or all set, and once set never change (the
//     schema's triggers refuse anything else); one UPDATE sets all three.
//   - recall_index_state.indexed_through = W: every row with id <= W had its columns
//     when W was written (W never goes down). With one writer, rows commit in id
//     order and W is exact. With several nodes writing one database, a row may commit
//     below a W another node's indexer wrote meanwhile; the indexer and the tail scan
//     therefore read the rows whose columns are NULL (the partial index
//     messages_unindexed), not the rows above W, and nothing is skipped.
//   - A batch commits without waiting for the disk (synchronous_commit off): it only
//     derives columns from rows already durable, and a batch lost in a crash leaves
//     its rows NULL and the watermark where it was, so they are filled again.
//   - Several indexers (nodes) never fill the same row twice: a batch locks its rows
//     (FOR NO KEY UPDATE SKIP LOCKED, which an append's foreign-key check does not wait
//     for) and sets only rows still NULL.
//
// The PostgreSQL store owns one (pg_store::maintenance()); the log and cold-copy hooks
// are SQLite's and do nothing here (the server copies its own log back; no cold copies).
// Thread: the store's owner (the storage actor, detached).
#pragma once

#include <cstdint>
#include <functional>

#include <pqxx/transaction_base>

#include "store/store_maintenance.hpp"

namespace mneme {

class pg_store;

// Rows one indexing transaction fills at most, and their text bytes (at least one row
// whatever its size): a request waiting behind a batch waits for one row's columns
// (should_yield is asked after each), one UPDATE and the COMMIT.
inline constexpr int64_t pg_index_batch_rows = 256;
inline constexpr int64_t pg_index_batch_bytes = 4 * 1024 * 1024;
// The same while appends keep coming (the tick's plan holds rows back): the writer's
// connection runs the batch, so an append arriving during its SELECT or UPDATE waits
// for the whole statement; smaller statements bound that wait.
inline constexpr int64_t pg_index_busy_batch_rows = 32;
inline constexpr int64_t pg_index_busy_batch_bytes = 256 * 1024;

struct pg_index_fill {
  int64_t rows = 0;       // rows whose columns this batch set
  int64_t bytes = 0;      // their content bytes
  bool caught_up = false; // no unindexed row was left unread by this batch
  bool yielded = false;   // should_yield() stopped it after a row
  int64_t deferred_id = 0; // the first row above `through`, where it stopped (0: none)
  int64_t indexed_through = 0; // recall_index_state.indexed_through after the batch
};

// Inside `t` (a write transaction of its own): the lowest unindexed rows, up to
// `max_rows` and `max_bytes` of content (at least one row), get their recall columns,
// stopping before the first row above `through` and after any row after which
// should_yield() answers true; then the watermark
// moves up to below the lowest row still unindexed (or to the highest id when none).
// REQUIRES: schema v12; max_rows >= 1.
pg_index_fill pg_fill_recall_columns(pqxx::transaction_base& t, int64_t max_rows,
                                     int64_t max_bytes, int64_t through,
                                     const std::function<bool()>& should_yield = {});

// Rows whose recall columns are NULL, and the watermark, inside `t`.
int64_t pg_unindexed_rows(pqxx::transaction_base& t);
int64_t pg_indexed_through(pqxx::transaction_base& t);

inline constexpr int64_t pg_analyze_after_rows = 10000;

class pg_maintenance final : public store_maintenance {
public:
  explicit pg_maintenance(pg_store& store) : store_(store) {}

  bool in_transaction() const override;
  // The same figure for the three indexes: one batch fills all three columns.
  caf::expected<fts_index_figures> index_backlogs() override;
  // One batch: plan.run / plan.max_* bounded by pg_index_batch_*. Every row counts as
  // large (its columns cost the server more than its append): only rows up to
  // plan.large_rows_through go (all once the writer is quiet; otherwise those waiting
  // longer than policies/index_pacing's large_row_max_wait_ms), so indexing does not
  // take the writer from appends arriving; stop large_row_due names the row that waits.
  caf::expected<index_progress> index_tick(const index_tick_plan& plan,
                                           const std::function<bool()>& should_yield) override;
  // Every batch until caught up; after pg_analyze_after_rows or more, ANALYZE of the
  // tables recall reads, so the planner learns at once that the columns are filled
  // (before autovacuum's next look it still counts them NULL, and a search then plans
  // the unindexed tail as a scan of the user's rows: ~4× slower per search, measured
  // on recall_quality_test's 42,000-row corpus). A failed ANALYZE is not an error:
  // the statistics only speed searches up.
  caf::expected<int64_t> index_all() override;

  caf::expected<int64_t> page_bytes() override { return int64_t{8192}; }
  void watch_log() override {}
  int64_t log_pages() const override { return 0; }
  bool take_log_commit() override { return false; }
  void mark_log_commit() override {}
  caf::expected<wal_checkpoint_result> checkpoint_log() override {
    return wal_checkpoint_result{};
  }
  // PostgreSQL's log and disk are the server's: nothing to cut here, and the free space
  // of the database's filesystem is unknown to a client (the indexer never waits on it).
  caf::expected<wal_checkpoint_result> truncate_log() override {
    return wal_checkpoint_result{};
  }
  int64_t free_space_bytes() const override { return -1; }
  caf::expected<std::unique_ptr<log_checkpointer>> open_log_checkpointer() override;

  std::string cold_copy_folder() const override { return {}; }
  cold_sweep_result sweep_cold_copies(const std::string&, int64_t, time_ms) override {
    return {};
  }

private:
  caf::expected<pg_index_fill> fill(int64_t max_rows, int64_t max_bytes, int64_t through,
                                    const std::function<bool()>& should_yield);

  pg_store& store_;
};

} // namespace mneme
