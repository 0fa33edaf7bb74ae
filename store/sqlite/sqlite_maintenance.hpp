// SQLite's store_maintenance (store/store_maintenance.hpp): the idle-time FTS5 indexer
// (store/sqlite/fts_indexer.hpp), WAL checkpoints (store/sqlite/db_connection.hpp) and
// cold copies (store/sqlite/cold_storage.hpp), each on the writer connection of a
// sqlite_store, which owns this object.
// Thread: the store's owner.
#pragma once

#include <cstdint>
#include <string>

#include "store/sqlite/db_connection.hpp"
#include "store/store_maintenance.hpp"
#include "store/store_params.hpp"

namespace mneme {

// The free space of the filesystem holding the file at `db_path` (statvfs of its
// folder: the blocks an unprivileged process may use), in bytes; -1 for an in-memory
// or URI path, or when the call fails.
int64_t filesystem_free_bytes(const std::string& db_path);

class sqlite_maintenance final : public store_maintenance {
public:
  // REQUIRES: `db` is the writer and outlives this object; so does `params`.
  sqlite_maintenance(db_connection& db, const store_params& params)
    : db_(db), params_(params) {}

  bool in_transaction() const override;
  caf::expected<fts_index_figures> index_backlogs() override;
  caf::expected<index_progress> index_tick(const index_tick_plan& plan,
                                           const std::function<bool()>& should_yield) override;
  caf::expected<int64_t> index_all() override;
  caf::expected<int64_t> page_bytes() override;
  void watch_log() override;
  int64_t log_pages() const override;
  bool take_log_commit() override;
  void mark_log_commit() override;
  caf::expected<wal_checkpoint_result> checkpoint_log() override;
  caf::expected<wal_checkpoint_result> truncate_log() override;
  int64_t free_space_bytes() const override;
  caf::expected<std::unique_ptr<log_checkpointer>> open_log_checkpointer() override;
  std::string cold_copy_folder() const override;
  cold_sweep_result sweep_cold_copies(const std::string& folder, int64_t limit,
                                      time_ms now) override;

private:
  db_connection& db_;
  const store_params& params_;
};

} // namespace mneme
