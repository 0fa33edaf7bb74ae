// A read-only connection to the mneme database for readers that run beside the
// single writer (recall, exports, CLI inspection). WAL lets a reader see the last
// committed state while the writer commits; a reader never blocks the writer and
// cannot write (the connection is opened read-only and query_only).
// Thread: one owner at a time (e.g. one detached reader actor). Copy deleted.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "caf/expected.hpp"

#include "messages/storage_types.hpp"
#include "messages/transcript.hpp"
#include "store/sqlite/db_connection.hpp"
#include "store/message_store.hpp"
#include "store/store_params.hpp"

namespace mneme {

class store_reader final : public recall_source {
public:
  // Errors as db_connection::open; a file without a mneme schema is storage_failed.
  // REQUIRES: params.path names a file (":memory:" cannot be shared with a writer).
  static caf::expected<std::unique_ptr<store_reader>> open(const store_params& params);
  store_reader(const store_reader&) = delete;
  store_reader& operator=(const store_reader&) = delete;

  caf::expected<session_record> session(const std::string& session_id);
  caf::expected<std::vector<session_record>> sessions(const session_filter& filter);
  caf::expected<session_stats> stats(const std::string& session_id);
  caf::expected<trigger_state> triggers(const std::string& session_id);
  caf::expected<std::vector<message>> live_context(const std::string& session_id);
  caf::expected<std::vector<message>> range(const std::string& session_id, int64_t first_id,
                                            int64_t last_id);
  caf::expected<std::vector<checkpoint_record>> checkpoints(const std::string& session_id);
  // message_store::compaction_log; a file from before the log (schema version 8 or
  // older, which a reader cannot migrate) has none: an empty list.
  caf::expected<std::vector<compaction_log_entry>> compaction_log(const std::string& session_id,
                                                                  int64_t limit);
  caf::expected<int64_t> export_jsonl(const std::string& session_id, std::ostream& out);

  // recall_search() on this connection (store/recall.hpp).
  caf::expected<recall_result> search(const recall_request& req) override;

  // The connection, for other read-only queries.
  db_connection& connection() { return *db_; }

private:
  explicit store_reader(std::unique_ptr<db_connection> db) : db_(std::move(db)) {}
  std::unique_ptr<db_connection> db_;
};

} // namespace mneme
