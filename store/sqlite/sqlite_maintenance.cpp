// SQLite's maintenance capability; see sqlite_maintenance.hpp.
#include "store/sqlite/sqlite_maintenance.hpp"

#include <sys/statvfs.h>

#include <filesystem>
#include <system_error>

#include "store/sqlite/cold_storage.hpp"
#include "store/sqlite/fts_indexer.hpp"

namespace mneme {

// The indexer's log budget (policies/index_pacing) leaves room for the dirty
// pages of the writer's page cache that a tick's COMMIT writes.
static_assert(index_pacing_params{}.writer_cache_bytes == writer_cache_kib * 1024);

namespace {

// A checkpointer connection (open_mode::checkpointer) to the writer's file.
class sqlite_log_checkpointer final : public log_checkpointer {
public:
  explicit sqlite_log_checkpointer(std::unique_ptr<db_connection> db) : db_(std::move(db)) {}
  caf::expected<wal_checkpoint_result> checkpoint() override { return db_->checkpoint_passive(); }

private:
  std::unique_ptr<db_connection> db_;
};

} // namespace

int64_t filesystem_free_bytes(const std::string& db_path) {
  if (db_path.empty() || db_path == ":memory:" || db_path.rfind("file:", 0) == 0)
    return -1;
  std::error_code ec;
  auto folder = std::filesystem::absolute(db_path, ec).parent_path();
  if (ec)
    return -1;
  struct statvfs fs {};
  if (::statvfs(folder.c_str(), &fs) != 0)
    return -1;
  return static_cast<int64_t>(fs.f_bavail) * static_cast<int64_t>(fs.f_frsize);
}

bool sqlite_maintenance::in_transaction() const {
  return db_.in_transaction();
}

caf::expected<fts_index_figures> sqlite_maintenance::index_backlogs() {
  return fts_index_backlogs(db_);
}

caf::expected<index_progress>
sqlite_maintenance::index_tick(const index_tick_plan& plan,
                               const std::function<bool()>& should_yield) {
  return index_pending(db_, plan, should_yield);
}

caf::expected<int64_t> sqlite_maintenance::index_all() {
  auto& db = db_;
  return index_all_pending(db, nullptr,
                           [&db](const index_progress&) { checkpoint_between_ticks(db); });
}

caf::expected<int64_t> sqlite_maintenance::page_bytes() {
  return db_.page_bytes();
}

void sqlite_maintenance::watch_log() {
  db_.watch_wal();
}

int64_t sqlite_maintenance::log_pages() const {
  return db_.wal_pages();
}

bool sqlite_maintenance::take_log_commit() {
  return db_.take_wal_commit();
}

void sqlite_maintenance::mark_log_commit() {
  db_.mark_wal_commit();
}

caf::expected<wal_checkpoint_result> sqlite_maintenance::checkpoint_log() {
  return db_.checkpoint_passive();
}

caf::expected<wal_checkpoint_result> sqlite_maintenance::truncate_log() {
  return db_.checkpoint_truncate();
}

int64_t sqlite_maintenance::free_space_bytes() const {
  return filesystem_free_bytes(params_.path);
}

caf::expected<std::unique_ptr<log_checkpointer>> sqlite_maintenance::open_log_checkpointer() {
  auto db = db_connection::open(params_, open_mode::checkpointer);
  if (!db)
    return std::move(db.error());
  return std::unique_ptr<log_checkpointer>{new sqlite_log_checkpointer(std::move(*db))};
}

std::string sqlite_maintenance::cold_copy_folder() const {
  return cold_storage_folder(params_);
}

cold_sweep_result sqlite_maintenance::sweep_cold_copies(const std::string& folder, int64_t limit,
                                                        time_ms now) {
  return sweep_cold_storage(db_, folder, limit, now);
}

} // namespace mneme
