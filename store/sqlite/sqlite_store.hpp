// The single writer of the mneme database (SPEC §1, §5, §6): sessions, appends,
// the atomic compaction commit, reset, checkpoints and rollback, trigger state.
// A plain class over one writer connection; every operation returns
// caf::expected / caf::error carrying mneme::errc and never throws. Reads are
// forwarded to store_queries on the same connection (read-your-writes).
//
// Decisions (see docs in the report of issue 3):
//   - Each public write runs in its own IMMEDIATE transaction and is durable when
//     it returns (PRAGMA synchronous=FULL unless store_params::synchronous_full is
//     false). The group-commit building blocks (begin_group ... commit_group) let
//     the storage actor put many appends into one transaction.
//   - Compaction: the archive ids must be a contiguous run of the session's live
//     context (position order) given in that order; otherwise bad_request and
//     nothing changes. The summary is inserted with is_summary = 1, the position of
//     the first archived row and replaced_first/last_id = min/max archived id; the
//     archived rows get active = 0, compacted = 1, archived_by = summary id.
//   - Reset: new session (generated id, same user/key/model, parent = old id),
//     live context = copies of the old session's head (a leading system row plus
//     the next `head_count` live rows, extended over tool rows answering them)
//     and of its latest live summary; the old session is ended with `reason`;
//     old rows untouched. New trigger state starts at zero.
//   - Rollback to a checkpoint: rows appended after it become rolled back
//     (active = 0, compacted = 0); rows archived by a summary made after it become
//     live again; the live context of that point is returned. Checkpoints made
//     after that point are retired (schema v6 checkpoints.retired_by): a rollback
//     to one of them is bad_request, since its rows are undone; creating the name
//     again makes it usable.
//
// The SQLite implementation of store/message_store.hpp.
// Thread: the owner (the storage actor, detached); not thread-safe. Copy deleted.
#pragma once

#include <functional>
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
  // Creates a session; rec.id may be empty (generated) or a valid unused id.
  // started_at_ms defaults to `now`; ended/trigger fields are ignored.
  caf::expected<session_record> create_session(session_record rec, time_ms now) override;
  caf::expected<session_record> end_session(const std::string& session_id, time_ms now,
                                            const std::string& reason) override;
  caf::error save_triggers(const std::string& session_id, const trigger_state& t) override;

  // --- appends, each in its own durable transaction
  caf::expected<int64_t> append(const message& m) override;
  caf::expected<message_ids> append_batch(const std::vector<message>& batch) override;

  // --- group commit: begin_group, any number of insert_*_in_group, commit_group.
  // A failed insert changes nothing (statement or savepoint atomic) unless SQLite
  // rolled the whole group back, which group_open() then reports as false.
  caf::error begin_group() override;
  caf::expected<int64_t> insert_in_group(const message& m) override;
  caf::expected<message_ids> insert_batch_in_group(const std::vector<message>& batch) override;
  caf::error commit_group() override;
  void abort_group() override;
  bool group_open() const override;

  // --- compaction, reset, checkpoints
  caf::expected<message> commit_compaction(const compaction_commit& c) override;
  // Row replacements (pruning, eviction, micro-compaction; see replacement_commit):
  // the inserted rows with their ids, in order. Validation failures are
  // bad_request / not_found and change nothing.
  caf::expected<std::vector<message>> commit_replacement(const replacement_commit& c) override;
  // The compaction `c` with `in_place: false` (SPEC §3; sqlite_store_child.cpp): ends
  // session c.session_id and continues it in a new child session (parent_id link)
  // whose live context is copies of the head, the summary and copies of the tail;
  // the slice is archived in the parent. The child's live context (every row's
  // session_id is the child's id). Refusals as commit_compaction, plus now < 0.
  caf::expected<std::vector<message>> continue_in_child(const compaction_commit& c,
                                                        time_ms now) override;
  // The reset after exhaustion (SPEC §5.3): ends the session and opens a new one under
  // its key (parent_id link) holding copies of the head and the latest summary, never
  // a row above max_row_tokens (0 = no limit; policies/reset_plan.hpp).
  caf::expected<session_record> reset_session(const std::string& session_id, int head_count,
                                              time_ms now, const std::string& reason,
                                              int64_t max_row_tokens = 0) override;
  caf::expected<checkpoint_record> create_checkpoint(const std::string& session_id,
                                                     const std::string& name,
                                                     time_ms now) override;
  caf::expected<std::vector<message>> rollback_to_checkpoint(const std::string& session_id,
                                                             const std::string& name) override;
  // The same rollback to a row instead of a checkpoint (a client's branch, the OpenAI
  // door): every row with id > mark is rolled back, rows a later summary
  // archived are revived, later checkpoints are retired by `label`. The live context.
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
                                            int64_t last_id) override;
  caf::expected<std::vector<checkpoint_record>>
  checkpoints(const std::string& session_id) override;
  caf::expected<int64_t> export_jsonl(const std::string& session_id, std::ostream& out) override;

  // --- memory tiers and agent tools: store/facts.hpp, store/session_tools.hpp and
  // store/jsonl_import.hpp on the writer connection (sqlite_store_memory.cpp).
  caf::expected<fact_record> put_fact(const fact_record& f, time_ms now) override;
  caf::expected<fact_record> remove_fact(const std::string& user_id, const std::string& key,
                                         time_ms now) override;
  caf::expected<std::vector<fact_record>> query_facts(const fact_query& q) override;
  caf::error put_session_tools(const std::string& session_key, const std::string& session_id,
                               const std::string& tools, time_ms now) override;
  caf::expected<std::string> session_tools(const std::string& session_key) override;
  caf::expected<session_record> import_jsonl(std::string_view jsonl, session_record into,
                                             time_ms now) override;

  const char* backend_name() const override { return "sqlite"; }
  sqlite_store* sqlite() override { return this; }
  const store_params& params() const override { return params_; }
  // Test seam: the connection (fault injection, measurements).
  db_connection& connection() { return *db_; }

private:
  sqlite_store(store_params params, std::unique_ptr<db_connection> db)
    : params_(std::move(params)), db_(std::move(db)) {}

  // Validates and inserts one message of an open session inside the current
  // transaction; position 0 means "= id".
  caf::expected<int64_t> insert_message(const message& m, int64_t position = 0);
  // not_found / bad_request unless the session exists and is open. A group
  // remembers the sessions it found open (open_sessions_) and does not look them
  // up again.
  caf::error require_open_for_append(const std::string& session_id);
  caf::error write_triggers(const std::string& session_id, const trigger_state& t);
  // Marks a session ended at `now` (at least 1 ms) for `reason`, inside the caller's
  // transaction. `what` names the operation in the error.
  caf::error write_session_end(const std::string& session_id, time_ms now,
                               const std::string& reason, const char* what);
  caf::error require_open_session(const std::string& session_id);
  // The skeleton of every commit that rewrites an open session's live context
  // (compaction, replacement, child continuation): one IMMEDIATE transaction, the
  // session open at its start, `body` (() -> caf::expected<T>) inside it. Committed
  // only when body succeeds; otherwise rolled back and the file is unchanged.
  template <class T, class Body>
  caf::expected<T> commit_on_open_session(const std::string& session_id, Body&& body);
  // Inside the current transaction: archives each live row of `ids` (active = 0,
  // compacted = 1, archived_by = absorber(id)). REQUIRES: the ids were checked live.
  caf::error archive_rows(const std::vector<int64_t>& ids,
                          const std::function<int64_t(int64_t)>& absorber);
  caf::error savepoint(const char* sql, const std::string& what);

  store_params params_;
  std::unique_ptr<db_connection> db_;
  std::optional<write_transaction> group_;
  // Sessions a group append found open in a committed state. Sound because this
  // store is the only writer of the file (the writer lock) and a session ends only
  // through write_session_end, which drops it here; a group creates no session,
  // so a rolled-back group cannot leave one here that does not exist. Cleared
  // when it reaches max_open_sessions_remembered.
  std::unordered_set<std::string> open_sessions_;
  session_id_generator ids_;
};

template <class T, class Body>
caf::expected<T> sqlite_store::commit_on_open_session(const std::string& session_id,
                                                      Body&& body) {
  write_transaction txn{*db_};
  if (auto err = txn.begin())
    return err;
  if (auto err = require_open_session(session_id))
    return err;
  caf::expected<T> result = body();
  if (!result)
    return result;
  if (auto err = txn.commit())
    return err;
  return result;
}

} // namespace mneme
