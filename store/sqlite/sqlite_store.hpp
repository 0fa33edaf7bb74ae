// The SQLite store: the embedded default implementation of store/message_store.hpp,
// whose contracts every operation keeps. A plain class over one writer connection
// (store/sqlite/db_connection.hpp: the file's writer lock, WAL, migrations); it never
// throws. What is particular to SQLite:
//   - Each write runs in its own IMMEDIATE transaction; durable on return under
//     PRAGMA synchronous=FULL (NORMAL when store_params::synchronous_full is false:
//     then a power loss may lose the last commits, never half of one).
//   - Group commit: one IMMEDIATE transaction; a batch inside it is a savepoint.
//     SQLite itself may roll the whole group back (a full disk, an I/O error), which
//     group_open() reports.
//   - Reads run on the writer connection (store/sqlite/store_queries.hpp).
//   - Full-text indexing is not part of an append: the owner fills the indexes when
//     idle (store/sqlite/fts_indexer.hpp).
// Thread: the owner (the storage actor, detached); not thread-safe. Copy deleted.
#pragma once

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <unordered_set>
#include <vector>

#include "caf/error.hpp"
#include "caf/expected.hpp"

#include "messages/storage_types.hpp"
#include "messages/transcript.hpp"
#include "store/sqlite/db_connection.hpp"
#include "store/sqlite/sqlite_maintenance.hpp"
#include "store/message_store.hpp"
#include "store/session_ids.hpp"
#include "store/store_params.hpp"

namespace mneme {

class sqlite_store final : public message_store {
public:
  static caf::expected<std::unique_ptr<sqlite_store>> open(const store_params& params);
  sqlite_store(const sqlite_store&) = delete;
  sqlite_store& operator=(const sqlite_store&) = delete;

  // --- sessions
  caf::expected<session_record> create_session(session_record rec, time_ms now) override;
  caf::expected<session_record> end_session(const std::string& session_id, time_ms now,
                                            const std::string& reason) override;
  caf::error save_triggers(const std::string& session_id, const trigger_state& t) override;

  // --- appends
  caf::expected<int64_t> append(const message& m) override;
  caf::expected<message_ids> append_batch(const std::vector<message>& batch) override;

  // --- group commit
  caf::error begin_group() override;
  caf::expected<int64_t> insert_in_group(const message& m) override;
  caf::expected<message_ids> insert_batch_in_group(const std::vector<message>& batch) override;
  caf::error commit_group() override;
  void abort_group() override;
  bool group_open() const override;

  // --- compaction, reset, checkpoints
  caf::expected<message> commit_compaction(const compaction_commit& c) override;
  caf::expected<std::vector<message>> commit_replacement(const replacement_commit& c) override;
  caf::expected<std::vector<message>> continue_in_child(const compaction_commit& c,
                                                        time_ms now) override;
  caf::expected<session_record> reset_session(const std::string& session_id, int head_count,
                                              time_ms now, const std::string& reason,
                                              int64_t max_row_tokens = 0) override;
  caf::expected<checkpoint_record> create_checkpoint(const std::string& session_id,
                                                     const std::string& name,
                                                     time_ms now) override;
  caf::expected<std::vector<message>> rollback_to_checkpoint(const std::string& session_id,
                                                             const std::string& name) override;
  caf::expected<std::vector<message>> rollback_after_row(const std::string& session_id,
                                                         int64_t mark,
                                                         const std::string& label) override;

  // --- reads on the writer connection
  caf::expected<session_record> session(const std::string& session_id) override;
  caf::expected<std::vector<session_record>> sessions(const session_filter& filter) override;
  caf::expected<session_stats> stats(const std::string& session_id) override;
  caf::expected<trigger_state> triggers(const std::string& session_id) override;
  caf::expected<std::vector<message>> live_context(const std::string& session_id) override;
  caf::expected<std::vector<message>> range(const std::string& session_id, int64_t first_id,
                                            int64_t last_id,
                                            int64_t limit = range_unlimited) override;
  caf::expected<std::vector<message>>
  idempotent_rows(const std::string& session_key, const std::string& idempotency_key,
                  time_ms since_ms, int64_t limit) override;
  caf::expected<std::vector<checkpoint_record>>
  checkpoints(const std::string& session_id) override;
  caf::expected<int64_t> export_jsonl(const std::string& session_id, std::ostream& out) override;

  // --- memory tiers and agent tools (sqlite_store_memory.cpp)
  caf::expected<fact_record> put_fact(const fact_record& f, time_ms now) override;
  caf::expected<fact_record> remove_fact(const std::string& user_id, const std::string& key,
                                         time_ms now) override;
  caf::expected<std::vector<fact_record>> query_facts(const fact_query& q) override;
  caf::expected<std::vector<fact_record>> facts_by_id(const std::string& user_id,
                                                      const std::vector<int64_t>& ids) override;
  caf::expected<embed_candidates> rows_to_embed(int32_t source, int64_t after_id,
                                                int64_t limit) override;
  caf::error store_vectors(const embed_write& w) override;
  caf::expected<embed_progress> embed_progress_of(const std::string& model,
                                                  int32_t dims) override;
  caf::expected<std::vector<stored_vector>> stored_vectors(const std::string& model,
                                                           int32_t dims, int32_t source,
                                                           int64_t after_id,
                                                           int64_t limit) override;
  caf::error put_session_tools(const std::string& session_key, const std::string& session_id,
                               const std::string& tools, time_ms now) override;
  caf::expected<std::string> session_tools(const std::string& session_key) override;
  caf::error put_response(const response_record& r) override;
  caf::expected<response_record> response(const std::string& id) override;
  caf::expected<response_record> delete_response(const std::string& id, time_ms now) override;
  caf::expected<session_record> import_jsonl(std::string_view jsonl, session_record into,
                                             time_ms now) override;

  // --- the compaction log (sqlite_store_commits.cpp)
  caf::expected<int64_t> log_compaction_attempt(const compaction_log_entry& e) override;
  caf::expected<std::vector<compaction_log_entry>>
  compaction_log(const std::string& session_id, int64_t limit) override;

  const char* backend_name() const override { return "sqlite"; }
  // The idle-time FTS5 indexer, WAL checkpoints and cold copies on this writer.
  store_maintenance* maintenance() override { return &maintenance_; }
  const store_params& params() const override { return params_; }
  // Test seam: the connection (fault injection, measurements).
  db_connection& connection() { return *db_; }

private:
  // The primitives of the session commits (store/session_writer.hpp), in
  // sqlite_store_commits.cpp.
  friend class sqlite_session_writer;

  sqlite_store(store_params params, std::unique_ptr<db_connection> db)
    : params_(std::move(params)), db_(std::move(db)), maintenance_(*db_, params_) {}

  // Validates and inserts one message of an open session inside the current
  // transaction; position 0 means "= id".
  caf::expected<int64_t> insert_message(const message& m, int64_t position = 0);
  // not_found / bad_request unless the session exists and is open. A group
  // remembers the sessions it found open (open_sessions_) and does not look them
  // up again.
  caf::error require_open_for_append(const std::string& session_id);
  caf::error require_open_session(const std::string& session_id);
  caf::error savepoint(const char* sql, const std::string& what);

  store_params params_;
  std::unique_ptr<db_connection> db_;
  sqlite_maintenance maintenance_; // over db_ and params_
  std::optional<write_transaction> group_;
  // Sessions a group append found open in a committed state. Sound because this
  // store is the only writer of the file (the writer lock) and a session ends only
  // through sqlite_session_writer::end_session, which drops it here; a group creates
  // no session, so a rolled-back group cannot leave one here that does not exist.
  // Cleared when it reaches max_open_sessions_remembered.
  std::unordered_set<std::string> open_sessions_;
  session_id_generator ids_;
};

} // namespace mneme
