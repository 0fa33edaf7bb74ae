// The store interface (issue 26): every operation the storage actor and the recall
// readers run against the database, so that one actor serves either backend
// (store/sqlite/sqlite_store.hpp, the embedded default; store/pg/pg_store.hpp, PostgreSQL).
// The semantics of each operation are those documented in sqlite_store.hpp; a
// backend that has not implemented one yet answers it with errc::storage_failed
// naming the operation and the backend (never a partial write).
//
// Left SQLite-only on purpose (reached through sqlite(), null on other backends):
// the idle-time FTS5 indexer and its watermarks, WAL checkpointing, cold-storage
// sweeps and the raw connection. PostgreSQL indexes in the append transaction and
// checkpoints on its own.
//
// Thread: one owner at a time (the storage actor, detached: every call may block).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "caf/error.hpp"
#include "caf/expected.hpp"

#include "messages/recall_types.hpp"
#include "messages/storage_types.hpp"
#include "messages/transcript.hpp"
#include "store/store_params.hpp"

namespace mneme {

class sqlite_store;

class message_store {
public:
  virtual ~message_store() = default;

  // "sqlite" or "postgres" (logs, errors).
  virtual const char* backend_name() const = 0;
  virtual const store_params& params() const = 0;
  // The SQLite store behind this interface, or null on another backend.
  virtual sqlite_store* sqlite() { return nullptr; }

  // --- sessions
  virtual caf::expected<session_record> create_session(session_record rec, time_ms now) = 0;
  virtual caf::expected<session_record> end_session(const std::string& session_id, time_ms now,
                                                    const std::string& reason) = 0;
  virtual caf::error save_triggers(const std::string& session_id, const trigger_state& t) = 0;

  // --- appends, each durable when it returns
  virtual caf::expected<int64_t> append(const message& m) = 0;
  virtual caf::expected<message_ids> append_batch(const std::vector<message>& batch) = 0;

  // --- group commit (begin_group, insert_*_in_group..., commit_group / abort_group)
  virtual caf::error begin_group() = 0;
  virtual caf::expected<int64_t> insert_in_group(const message& m) = 0;
  virtual caf::expected<message_ids> insert_batch_in_group(const std::vector<message>& batch) = 0;
  virtual caf::error commit_group() = 0;
  virtual void abort_group() = 0;
  // False once the backend rolled the whole group back (the group then fails).
  virtual bool group_open() const = 0;

  // --- compaction, replacement, child sessions, reset, checkpoints
  virtual caf::expected<message> commit_compaction(const compaction_commit& c) = 0;
  virtual caf::expected<std::vector<message>> commit_replacement(const replacement_commit& c) = 0;
  virtual caf::expected<std::vector<message>> continue_in_child(const compaction_commit& c,
                                                                time_ms now) = 0;
  virtual caf::expected<session_record> reset_session(const std::string& session_id,
                                                      int head_count, time_ms now,
                                                      const std::string& reason,
                                                      int64_t max_row_tokens = 0) = 0;
  virtual caf::expected<checkpoint_record> create_checkpoint(const std::string& session_id,
                                                             const std::string& name,
                                                             time_ms now) = 0;
  virtual caf::expected<std::vector<message>>
  rollback_to_checkpoint(const std::string& session_id, const std::string& name) = 0;
  virtual caf::expected<std::vector<message>>
  rollback_after_row(const std::string& session_id, int64_t mark, const std::string& label) = 0;

  // --- reads (read-your-writes: on the writer's connection)
  virtual caf::expected<session_record> session(const std::string& session_id) = 0;
  virtual caf::expected<std::vector<session_record>> sessions(const session_filter& filter) = 0;
  virtual caf::expected<session_stats> stats(const std::string& session_id) = 0;
  virtual caf::expected<trigger_state> triggers(const std::string& session_id) = 0;
  virtual caf::expected<std::vector<message>> live_context(const std::string& session_id) = 0;
  virtual caf::expected<std::vector<message>> range(const std::string& session_id,
                                                    int64_t first_id, int64_t last_id) = 0;
  virtual caf::expected<std::vector<checkpoint_record>>
  checkpoints(const std::string& session_id) = 0;
  virtual caf::expected<int64_t> export_jsonl(const std::string& session_id,
                                              std::ostream& out) = 0;

  // --- memory tiers and agent tools (store/facts.hpp, store/session_tools.hpp,
  // store/jsonl_import.hpp describe the semantics)
  virtual caf::expected<fact_record> put_fact(const fact_record& f, time_ms now) = 0;
  virtual caf::expected<fact_record> remove_fact(const std::string& user_id,
                                                 const std::string& key, time_ms now) = 0;
  virtual caf::expected<std::vector<fact_record>> query_facts(const fact_query& q) = 0;
  virtual caf::error put_session_tools(const std::string& session_key,
                                       const std::string& session_id, const std::string& tools,
                                       time_ms now) = 0;
  virtual caf::expected<std::string> session_tools(const std::string& session_key) = 0;
  virtual caf::expected<session_record> import_jsonl(std::string_view jsonl, session_record into,
                                                     time_ms now) = 0;

  // --- node mode (PostgreSQL only: the configuration refuses gateway.node_id on
  // another backend, which ignores this): the lease token this node holds on a
  // session key (0: none); see store/pg/pg_store.hpp.
  virtual void set_fence(const std::string& session_key, int64_t token) {
    (void)session_key;
    (void)token;
  }
};

// The read side used by the recall readers (actors/recall): one search on a
// connection of its own (SPEC §4; store/recall.hpp for the semantics).
class recall_source {
public:
  virtual ~recall_source() = default;
  virtual caf::expected<recall_result> search(const recall_request& req) = 0;
};

} // namespace mneme
