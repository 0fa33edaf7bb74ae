// The session commits of the SQLite store (store/session_commits.hpp) and the
// primitives they run on (store/session_writer.hpp), on the writer connection. Each
// write runs in one IMMEDIATE transaction: after a crash the file is entirely before
// or entirely after it. Archived and rolled-back rows change only in message_state:
// their text and their full-text index entries are never rewritten, so recall keeps
// finding them. Thread: the owner of the sqlite_store (the storage actor).
#include "store/sqlite/sqlite_store.hpp"

#include <optional>

#include <sqlite3.h>

#include "store/compaction_log.hpp"
#include "store/session_commits.hpp"
#include "store/session_writer.hpp"
#include "store/sqlite/session_rows.hpp"
#include "store/sqlite/sqlite_compaction_log.hpp"
#include "store/sqlite/sqlite_error.hpp"
#include "store/sqlite/store_queries.hpp"
#include "store/store_errors.hpp"

namespace mneme {

// SQLite's primitives: every failure of a statement is a value (db_connection::failure
// naming the step), so failure() only rethrows what is not SQLite's (out of memory).
// A read of committed state needs no transaction: this connection is the only writer.
class sqlite_session_writer final : public session_writer {
public:
  explicit sqlite_session_writer(sqlite_store& store) : store_(store), db_(*store.db_) {}

  caf::error begin(access a) override {
    if (a == access::read)
      return {};
    txn_.emplace(db_);
    return txn_->begin();
  }

  caf::error commit() override {
    if (!txn_)
      return {};
    if (auto err = txn_->commit())
      return err;
    txn_.reset();
    return {};
  }

  void roll_back() noexcept override {
    txn_.reset(); // an uncommitted write_transaction rolls back when it goes
  }

  caf::error failure(const std::exception&, const char*) override {
    throw;
  }

  caf::error require_open(const std::string& session_id) override {
    return store_.require_open_session(session_id);
  }

  caf::expected<session_record> load_session(const std::string& session_id) override {
    return mneme::load_session(db_, session_id);
  }

  caf::expected<std::vector<live_place>> live_places(const std::string& session_id) override {
    auto stmt = db_.prepare("SELECT id, coalesce(position, id) AS pos FROM message_state"
                            " WHERE session_id = ?1 AND active = 1 ORDER BY pos, id");
    if (!stmt)
      return std::move(stmt.error());
    statement_scope s{**stmt};
    s->bind(1, session_id);
    std::vector<live_place> out;
    for (;;) {
      auto rc = s->step();
      if (rc == SQLITE_DONE)
        return out;
      if (rc != SQLITE_ROW)
        return db_.failure(rc, "load live ids");
      out.push_back(live_place{s->column_int(0), s->column_int(1)});
    }
  }

  caf::expected<std::vector<message>> live_rows(const std::string& session_id) override {
    return load_live_context(db_, session_id);
  }

  caf::expected<std::optional<row_place>> find_row(int64_t id) override {
    auto stmt = db_.prepare("SELECT session_id, active, compacted FROM message_state"
                            " WHERE id = ?1");
    if (!stmt)
      return std::move(stmt.error());
    statement_scope s{**stmt};
    s->bind(1, id);
    auto rc = s->step();
    if (rc == SQLITE_DONE)
      return std::optional<row_place>{};
    if (rc != SQLITE_ROW)
      return db_.failure(rc, "look up row " + std::to_string(id));
    return std::optional<row_place>{
      row_place{s->column_text(0), s->column_int(1) != 0, s->column_int(2) != 0}};
  }

  caf::expected<int64_t> insert_message(const message& m, int64_t position) override {
    return store_.insert_message(m, position);
  }

  caf::error archive_rows(const std::vector<int64_t>& ids,
                          const std::vector<int64_t>& by) override {
    auto stmt = db_.prepare("UPDATE message_state SET active = 0, compacted = 1,"
                            " archived_by = ?1 WHERE id = ?2 AND active = 1");
    if (!stmt)
      return std::move(stmt.error());
    for (size_t i = 0; i < ids.size(); ++i) {
      statement_scope s{**stmt};
      s->bind(1, by[i]);
      s->bind(2, ids[i]);
      if (auto rc = s->step(); rc != SQLITE_DONE)
        return db_.failure(rc, "archive row " + std::to_string(ids[i]));
    }
    return {};
  }

  caf::error write_triggers(const std::string& session_id, const trigger_state& t) override {
    return mneme::write_triggers(db_, session_id, t);
  }

  std::string next_session_id(time_ms now) override {
    return store_.ids_.next(now);
  }

  caf::expected<bool> insert_session(const session_record& rec, const char* what) override {
    return mneme::insert_session(db_, rec, what);
  }

  caf::error end_session(const std::string& session_id, time_ms now, const std::string& reason,
                         const char* what) override {
    if (auto err = write_session_end(db_, session_id, now, reason, what))
      return err;
    store_.open_sessions_.erase(session_id);
    return {};
  }

  caf::expected<int64_t> last_row_id(const std::string& session_id) override {
    auto stmt = db_.prepare("SELECT coalesce(max(id), 0) FROM message_state"
                            " WHERE session_id = ?1");
    if (!stmt)
      return std::move(stmt.error());
    statement_scope s{**stmt};
    s->bind(1, session_id);
    if (auto rc = s->step(); rc != SQLITE_ROW)
      return db_.failure(rc, "checkpoint position");
    return s->column_int(0);
  }

  caf::error put_checkpoint(const checkpoint_record& cp) override {
    // REPLACE deletes the old row: retired_by starts again at its default ''.
    auto stmt = db_.prepare("INSERT OR REPLACE INTO checkpoints(session_id, name,"
                            " last_message_id, created_at_ms) VALUES (?1, ?2, ?3, ?4)");
    if (!stmt)
      return std::move(stmt.error());
    statement_scope s{**stmt};
    s->bind(1, cp.session_id);
    s->bind(2, cp.name);
    s->bind(3, cp.last_message_id);
    s->bind(4, cp.created_at_ms);
    if (auto rc = s->step(); rc != SQLITE_DONE)
      return db_.failure(rc, "create checkpoint");
    return {};
  }

  caf::expected<std::optional<checkpoint_mark>>
  find_checkpoint(const std::string& session_id, const std::string& name) override {
    auto stmt = db_.prepare("SELECT last_message_id, retired_by FROM checkpoints"
                            " WHERE session_id = ?1 AND name = ?2");
    if (!stmt)
      return std::move(stmt.error());
    statement_scope s{**stmt};
    s->bind(1, session_id);
    s->bind(2, name);
    auto rc = s->step();
    if (rc == SQLITE_DONE)
      return std::optional<checkpoint_mark>{};
    if (rc != SQLITE_ROW)
      return db_.failure(rc, "load checkpoint");
    return std::optional<checkpoint_mark>{checkpoint_mark{s->column_int(0), s->column_text(1)}};
  }

  caf::expected<int64_t> insert_compaction_log(const compaction_log_entry& e) override {
    return mneme::insert_compaction_log(db_, e);
  }

  caf::error roll_back_after(const std::string& session_id, int64_t mark,
                             const std::string& label) override {
    static constexpr const char* revive
      = "UPDATE message_state SET active = 1, compacted = 0, archived_by = 0"
        " WHERE session_id = ?1 AND compacted = 1 AND archived_by > ?2 AND id <= ?2";
    static constexpr const char* undo
      = "UPDATE message_state SET active = 0, compacted = 0"
        " WHERE session_id = ?1 AND id > ?2 AND (active = 1 OR compacted = 1)";
    for (auto sql : {revive, undo}) {
      auto stmt = db_.prepare(sql);
      if (!stmt)
        return std::move(stmt.error());
      statement_scope s{**stmt};
      s->bind(1, session_id);
      s->bind(2, mark);
      if (auto rc = s->step(); rc != SQLITE_DONE)
        return db_.failure(rc, "roll back");
    }
    auto stmt = db_.prepare("UPDATE checkpoints SET retired_by = ?3 WHERE session_id = ?1"
                            " AND last_message_id > ?2 AND retired_by = ''");
    if (!stmt)
      return std::move(stmt.error());
    statement_scope s{**stmt};
    s->bind(1, session_id);
    s->bind(2, mark);
    s->bind(3, label);
    if (auto rc = s->step(); rc != SQLITE_DONE)
      return db_.failure(rc, "retire later checkpoints");
    return {};
  }

private:
  sqlite_store& store_;
  db_connection& db_;
  std::optional<write_transaction> txn_;
};

caf::expected<session_record> sqlite_store::end_session(const std::string& session_id,
                                                        time_ms now, const std::string& reason) {
  sqlite_session_writer w{*this};
  return session_commits::end(w, session_id, now, reason);
}

caf::expected<message> sqlite_store::commit_compaction(const compaction_commit& c) {
  sqlite_session_writer w{*this};
  return session_commits::compaction(w, c, params_);
}

caf::expected<int64_t> sqlite_store::log_compaction_attempt(const compaction_log_entry& e) {
  if (auto err = check_compaction_log(e, false))
    return err;
  write_transaction txn{*db_};
  if (auto err = txn.begin())
    return err;
  if (auto err = require_session(*db_, e.session_id))
    return err;
  auto id = mneme::insert_compaction_log(*db_, e);
  if (!id)
    return id;
  if (auto err = txn.commit())
    return err;
  return id;
}

caf::expected<std::vector<compaction_log_entry>>
sqlite_store::compaction_log(const std::string& session_id, int64_t limit) {
  if (limit < 1 || limit > compaction_log_max_rows)
    return bad_request("compaction log: limit must be 1.."
                       + std::to_string(compaction_log_max_rows));
  if (auto err = require_session(*db_, session_id))
    return err;
  return compaction_log_of(*db_, session_id, limit);
}

caf::expected<std::vector<message>>
sqlite_store::commit_replacement(const replacement_commit& c) {
  sqlite_session_writer w{*this};
  return session_commits::replacement(w, c);
}

caf::expected<std::vector<message>> sqlite_store::continue_in_child(const compaction_commit& c,
                                                                    time_ms now) {
  sqlite_session_writer w{*this};
  return session_commits::child_continuation(w, c, now, params_);
}

caf::expected<session_record> sqlite_store::reset_session(const std::string& session_id,
                                                          int head_count, time_ms now,
                                                          const std::string& reason,
                                                          int64_t max_row_tokens) {
  sqlite_session_writer w{*this};
  return session_commits::reset(w, session_id, head_count, now, reason, max_row_tokens);
}

caf::expected<checkpoint_record> sqlite_store::create_checkpoint(const std::string& session_id,
                                                                 const std::string& name,
                                                                 time_ms now) {
  sqlite_session_writer w{*this};
  return session_commits::checkpoint(w, session_id, name, now);
}

caf::expected<std::vector<message>>
sqlite_store::rollback_to_checkpoint(const std::string& session_id, const std::string& name) {
  sqlite_session_writer w{*this};
  return session_commits::rollback_to_checkpoint(w, session_id, name);
}

caf::expected<std::vector<message>>
sqlite_store::rollback_after_row(const std::string& session_id, int64_t mark,
                                 const std::string& label) {
  sqlite_session_writer w{*this};
  return session_commits::rollback_after_row(w, session_id, mark, label);
}

} // namespace mneme
