// The state-changing operations of the single writer: compaction commit, reset,
// checkpoints and rollback. Each runs in one IMMEDIATE transaction: after a crash
// the file is entirely before or entirely after it. See sqlite_store.hpp for the
// decisions (what a valid compaction is, what a reset keeps).
#include "store/sqlite/sqlite_store.hpp"

#include <algorithm>
#include <cassert>

#include <sqlite3.h>

#include "policies/reset_plan.hpp"
#include "store/compaction_checks.hpp"
#include "store/row_codec.hpp"
#include "store/session_checks.hpp"
#include "store/sqlite/sqlite_error.hpp"
#include "store/sqlite/store_queries.hpp"

namespace mneme {

namespace {

struct live_row {
  int64_t id;
  int64_t position;
};

caf::expected<std::vector<live_row>> live_rows(db_connection& db, const std::string& session_id) {
  auto stmt = db.prepare("SELECT id, coalesce(position, id) AS pos FROM message_state"
                         " WHERE session_id = ?1 AND active = 1 ORDER BY pos, id");
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, session_id);
  std::vector<live_row> out;
  for (;;) {
    auto rc = s->step();
    if (rc == SQLITE_DONE)
      return out;
    if (rc != SQLITE_ROW)
      return db.failure(rc, "load live ids");
    out.push_back(live_row{s->column_int(0), s->column_int(1)});
  }
}

} // namespace

caf::expected<message> sqlite_store::commit_compaction(const compaction_commit& c) {
  if (auto err = check_compaction_summary("compaction", c, params_))
    return err;
  return commit_on_open_session<message>(c.session_id, [&]() -> caf::expected<message> {
    auto live = live_rows(*db_, c.session_id);
    if (!live)
      return std::move(live.error());
    auto start = locate_archive_run("compaction", *live, c.archive_ids, c.session_id);
    if (!start)
      return std::move(start.error());
    auto summary = summary_row(c, c.session_id);
    auto id = insert_message(summary, (*live)[*start].position);
    if (!id)
      return std::move(id.error());
    summary.id = *id;
    if (auto err = archive_rows(c.archive_ids, [&](int64_t) { return summary.id; }))
      return err;
    if (c.update_triggers)
      if (auto err = write_triggers(c.session_id, c.triggers))
        return err;
    return summary;
  });
}

caf::error sqlite_store::archive_rows(const std::vector<int64_t>& ids,
                                      const std::function<int64_t(int64_t)>& absorber) {
  auto stmt = db_->prepare("UPDATE message_state SET active = 0, compacted = 1, archived_by = ?1"
                           " WHERE id = ?2 AND active = 1");
  if (!stmt)
    return std::move(stmt.error());
  for (auto archived : ids) {
    statement_scope s{**stmt};
    s->bind(1, absorber(archived));
    s->bind(2, archived);
    if (auto rc = s->step(); rc != SQLITE_DONE)
      return db_->failure(rc, "archive row " + std::to_string(archived));
  }
  return {};
}

caf::expected<session_record> sqlite_store::reset_session(const std::string& session_id,
                                                          int head_count, time_ms now,
                                                          const std::string& reason,
                                                          int64_t max_row_tokens) {
  if (auto err = check_reset_request(head_count, now, max_row_tokens))
    return err;
  write_transaction txn{*db_};
  if (auto err = txn.begin())
    return err;
  if (auto err = require_open_session(session_id))
    return err;
  auto old = load_session(*db_, session_id);
  if (!old)
    return std::move(old.error());
  auto live = load_live_context(*db_, session_id);
  if (!live)
    return std::move(live.error());
  // The head and the latest summary, without any row that cannot fit
  // (policies/reset_plan.hpp).
  std::vector<message> kept;
  for (auto i : plan_reset_copy(*live, head_count, max_row_tokens))
    kept.push_back((*live)[i]);
  session_record child;
  child.id = ids_.next(now);
  child.user_id = old->user_id;
  child.session_key = old->session_key;
  child.parent_id = old->id;
  child.model = old->model;
  child.started_at_ms = now;
  {
    auto stmt = db_->prepare("INSERT INTO sessions(id, user_id, session_key, parent_id, model,"
                             " started_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    if (!stmt)
      return std::move(stmt.error());
    statement_scope s{**stmt};
    s->bind(1, child.id);
    s->bind(2, child.user_id);
    s->bind(3, child.session_key);
    s->bind(4, child.parent_id);
    s->bind(5, child.model);
    s->bind(6, child.started_at_ms);
    if (auto rc = s->step(); rc != SQLITE_DONE)
      return db_->failure(rc, "create the reset session");
  }
  for (auto m : kept) {
    m.id = 0;
    m.session_id = child.id;
    m.active = true;
    m.compacted = false;
    if (auto id = insert_message(m); !id)
      return std::move(id.error());
  }
  if (auto err = write_session_end(session_id, now, reason, "end the reset session"))
    return err;
  if (auto err = txn.commit())
    return err;
  return child;
}

caf::expected<checkpoint_record> sqlite_store::create_checkpoint(const std::string& session_id,
                                                                 const std::string& name,
                                                                 time_ms now) {
  if (name.empty() || name.size() > 128)
    return bad_request("checkpoint: name must be 1..128 bytes");
  write_transaction txn{*db_};
  if (auto err = txn.begin())
    return err;
  if (auto err = require_open_session(session_id))
    return err;
  checkpoint_record cp{session_id, name, 0, now};
  {
    auto stmt = db_->prepare("SELECT coalesce(max(id), 0) FROM message_state"
                             " WHERE session_id = ?1");
    if (!stmt)
      return std::move(stmt.error());
    statement_scope s{**stmt};
    s->bind(1, session_id);
    if (auto rc = s->step(); rc != SQLITE_ROW)
      return db_->failure(rc, "checkpoint position");
    cp.last_message_id = s->column_int(0);
  }
  auto stmt = db_->prepare("INSERT OR REPLACE INTO checkpoints(session_id, name,"
                           " last_message_id, created_at_ms) VALUES (?1, ?2, ?3, ?4)");
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, cp.session_id);
  s->bind(2, cp.name);
  s->bind(3, cp.last_message_id);
  s->bind(4, cp.created_at_ms);
  if (auto rc = s->step(); rc != SQLITE_DONE)
    return db_->failure(rc, "create checkpoint");
  if (auto err = txn.commit())
    return err;
  return cp;
}

caf::expected<std::vector<message>>
sqlite_store::rollback_to_checkpoint(const std::string& session_id, const std::string& name) {
  // The single writer runs one operation at a time: nothing changes between this read
  // and the rollback's transaction.
  if (auto err = require_open_session(session_id))
    return err;
  int64_t mark = 0;
  {
    auto stmt = db_->prepare("SELECT last_message_id, retired_by FROM checkpoints"
                             " WHERE session_id = ?1 AND name = ?2");
    if (!stmt)
      return std::move(stmt.error());
    statement_scope s{**stmt};
    s->bind(1, session_id);
    s->bind(2, name);
    auto rc = s->step();
    if (rc == SQLITE_DONE)
      return not_found("no checkpoint '" + name + "' in session '" + session_id + "'");
    if (rc != SQLITE_ROW)
      return db_->failure(rc, "load checkpoint");
    mark = s->column_int(0);
    if (auto by = s->column_text(1); !by.empty())
      return bad_request("checkpoint '" + name + "' was undone by the rollback to '" + by
                         + "': its rows are rolled back; create it again to use the name");
  }
  return rollback_after_row(session_id, mark, name);
}

caf::expected<std::vector<message>>
sqlite_store::rollback_after_row(const std::string& session_id, int64_t mark,
                                 const std::string& label) {
  if (mark < 0)
    return bad_request("rollback: a negative row id");
  write_transaction txn{*db_};
  if (auto err = txn.begin())
    return err;
  if (auto err = require_open_session(session_id))
    return err;
  // Order matters: first revive what later summaries archived, then roll back
  // everything appended after the mark (including those summaries).
  static constexpr const char* revive
    = "UPDATE message_state SET active = 1, compacted = 0, archived_by = 0"
      " WHERE session_id = ?1 AND compacted = 1 AND archived_by > ?2 AND id <= ?2";
  static constexpr const char* undo
    = "UPDATE message_state SET active = 0, compacted = 0"
      " WHERE session_id = ?1 AND id > ?2 AND (active = 1 OR compacted = 1)";
  for (auto sql : {revive, undo}) {
    auto stmt = db_->prepare(sql);
    if (!stmt)
      return std::move(stmt.error());
    statement_scope s{**stmt};
    s->bind(1, session_id);
    s->bind(2, mark);
    if (auto rc = s->step(); rc != SQLITE_DONE)
      return db_->failure(rc, "roll back");
  }
  // Checkpoints made after the mark pointed into the rows just undone.
  {
    auto stmt = db_->prepare("UPDATE checkpoints SET retired_by = ?3 WHERE session_id = ?1"
                             " AND last_message_id > ?2 AND retired_by = ''");
    if (!stmt)
      return std::move(stmt.error());
    statement_scope s{**stmt};
    s->bind(1, session_id);
    s->bind(2, mark);
    s->bind(3, label);
    if (auto rc = s->step(); rc != SQLITE_DONE)
      return db_->failure(rc, "retire later checkpoints");
  }
  auto live = load_live_context(*db_, session_id);
  if (!live)
    return live;
  if (auto err = txn.commit())
    return err;
  return live;
}

} // namespace mneme
