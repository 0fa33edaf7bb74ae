// Read-only connection for readers; see store_reader.hpp.
#include "store/sqlite/store_reader.hpp"

#include "store/compaction_log.hpp"
#include "store/sqlite/migrations.hpp"
#include "store/sqlite/sqlite_compaction_log.hpp"
#include "store/sqlite/sqlite_jsonl_export.hpp"
#include "store/sqlite/sqlite_recall.hpp"
#include "store/sqlite/store_queries.hpp"
#include "store/store_errors.hpp"

namespace mneme {

caf::expected<std::unique_ptr<store_reader>> store_reader::open(const store_params& params) {
  auto db = db_connection::open(params, open_mode::reader);
  if (!db)
    return std::move(db.error());
  return std::unique_ptr<store_reader>{new store_reader(std::move(*db))};
}

caf::expected<session_record> store_reader::session(const std::string& session_id) {
  return load_session(*db_, session_id);
}

caf::expected<std::vector<session_record>> store_reader::sessions(const session_filter& f) {
  return list_sessions(*db_, f);
}

caf::expected<session_stats> store_reader::stats(const std::string& session_id) {
  return load_session_stats(*db_, session_id);
}

caf::expected<trigger_state> store_reader::triggers(const std::string& session_id) {
  return load_triggers(*db_, session_id);
}

caf::expected<std::vector<message>> store_reader::live_context(const std::string& session_id) {
  return load_live_context(*db_, session_id);
}

caf::expected<std::vector<message>> store_reader::range(const std::string& session_id,
                                                        int64_t first_id, int64_t last_id) {
  return load_range(*db_, session_id, first_id, last_id, range_unlimited);
}

caf::expected<std::vector<checkpoint_record>>
store_reader::checkpoints(const std::string& session_id) {
  return list_checkpoints(*db_, session_id);
}

caf::expected<std::vector<compaction_log_entry>>
store_reader::compaction_log(const std::string& session_id, int64_t limit) {
  if (limit < 1 || limit > compaction_log_max_rows)
    return bad_request("compaction log: limit must be 1.."
                       + std::to_string(compaction_log_max_rows));
  if (auto err = require_session(*db_, session_id))
    return err;
  auto version = schema_version(*db_);
  if (!version)
    return std::move(version.error());
  if (*version < compaction_log_schema_version)
    return std::vector<compaction_log_entry>{};
  return compaction_log_of(*db_, session_id, limit);
}

caf::expected<int64_t> store_reader::export_jsonl(const std::string& session_id,
                                                  std::ostream& out) {
  return export_session_jsonl(*db_, session_id, out);
}

caf::expected<recall_result> store_reader::search(const recall_request& req) {
  return recall_search(*db_, req, frequent_term_plan::newest_first, vectors_.get());
}

} // namespace mneme
