// The SQLite store: opening, sessions, appends, group commits and reads; see
// sqlite_store.hpp. The session commits (compaction, replacement, child continuation,
// reset, checkpoints, rollback, the end of a session) are in sqlite_store_commits.cpp.
#include "store/sqlite/sqlite_store.hpp"

#include <cassert>

#include <sqlite3.h>

#include "store/sqlite/sqlite_jsonl_export.hpp"
#include "store/row_codec.hpp"
#include "store/session_checks.hpp"
#include "store/sqlite/session_rows.hpp"
#include "store/sqlite/sqlite_error.hpp"
#include "store/sqlite/store_queries.hpp"

namespace mneme {

namespace {

constexpr size_t max_open_sessions_remembered = 65536; // ~5 MB of ids

} // namespace

caf::expected<std::unique_ptr<sqlite_store>> sqlite_store::open(const store_params& params) {
  if (params.max_batch < 1)
    return bad_request("store: max_batch must be >= 1");
  if (params.max_content_bytes < 1)
    return bad_request("store: max_content_bytes must be >= 1");
  auto db = db_connection::open(params, open_mode::writer);
  if (!db)
    return std::move(db.error());
  return std::unique_ptr<sqlite_store>{new sqlite_store(params, std::move(*db))};
}

// --- sessions

caf::expected<session_record> sqlite_store::create_session(session_record rec, time_ms now) {
  if (auto err = prepare_new_session(rec, now, ids_))
    return err;
  write_transaction txn{*db_};
  if (auto err = txn.begin())
    return err;
  if (!rec.parent_id.empty())
    if (auto err = require_session(*db_, rec.parent_id))
      return err;
  auto created = insert_session(*db_, rec, "create session");
  if (!created)
    return std::move(created.error());
  if (!*created)
    return bad_request("create session: id '" + rec.id + "' already exists");
  if (auto err = txn.commit())
    return err;
  return rec;
}

caf::error sqlite_store::save_triggers(const std::string& session_id, const trigger_state& t) {
  write_transaction txn{*db_};
  if (auto err = txn.begin())
    return err;
  if (auto err = write_triggers(*db_, session_id, t))
    return err;
  return txn.commit();
}

caf::error sqlite_store::require_open_session(const std::string& session_id) {
  auto stmt = db_->prepare("SELECT ended_at_ms FROM sessions WHERE id = ?1");
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, session_id);
  auto rc = s->step();
  if (rc == SQLITE_DONE)
    return not_found("unknown session '" + session_id + "'");
  if (rc != SQLITE_ROW)
    return db_->failure(rc, "look up session");
  if (s->column_int(0) != 0)
    return bad_request("session '" + session_id + "' has ended");
  return {};
}

// --- appends

caf::error sqlite_store::require_open_for_append(const std::string& session_id) {
  bool in_group = group_open();
  if (in_group && open_sessions_.count(session_id) != 0)
    return {};
  if (auto err = require_open_session(session_id))
    return err;
  if (in_group) {
    if (open_sessions_.size() >= max_open_sessions_remembered)
      open_sessions_.clear();
    open_sessions_.insert(session_id);
  }
  return {};
}

caf::expected<int64_t> sqlite_store::insert_message(const message& m, int64_t position) {
  if (auto err = validate_new_message(m, params_))
    return err;
  if (auto err = require_open_for_append(m.session_id))
    return err;
  // A plain INSERT ... VALUES: an INSERT ... SELECT into a table with triggers
  // goes through a temporary table, i.e. two more copies of every text.
  auto stmt = db_->prepare(
    "INSERT INTO messages(session_id, role, content, tool_call_id, tool_calls, tool_name,"
    " timestamp_ms, token_estimate, is_summary, replaced_first_id, replaced_last_id,"
    " idempotency_key) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)");
  if (!stmt)
    return std::move(stmt.error());
  // The texts are bound without a copy (a 200 KB tool output would otherwise be
  // copied once more on the writer's thread): `m` and `tool_calls` outlive the
  // statement scope, which resets the statement before they go.
  const auto tool_calls = encode_tool_calls(m.tool_calls);
  statement_scope s{**stmt};
  s->bind_unowned(1, m.session_id);
  s->bind(2, to_string(m.role));
  s->bind_unowned(3, m.content);
  s->bind_unowned(4, m.tool_call_id);
  s->bind_unowned(5, tool_calls);
  s->bind_unowned(6, m.tool_name);
  s->bind(7, m.timestamp_ms);
  s->bind(8, m.token_estimate);
  s->bind(9, int64_t{m.is_summary ? 1 : 0});
  s->bind(10, m.replaced_first_id);
  s->bind(11, m.replaced_last_id);
  s->bind_unowned(12, m.idempotency_key);
  if (auto rc = s->step(); rc != SQLITE_DONE)
    return db_->failure(rc, "append to session " + m.session_id);
  auto id = sqlite3_last_insert_rowid(db_->native_handle());
  if (position > 0) {
    auto place = db_->prepare("UPDATE message_state SET position = ?2 WHERE id = ?1");
    if (!place)
      return std::move(place.error());
    statement_scope ps{**place};
    ps->bind(1, id);
    ps->bind(2, position);
    if (auto rc = ps->step(); rc != SQLITE_DONE)
      return db_->failure(rc, "place summary");
  }
  return id;
}

caf::expected<int64_t> sqlite_store::append(const message& m) {
  write_transaction txn{*db_};
  if (auto err = txn.begin())
    return err;
  auto id = insert_message(m);
  if (!id)
    return id;
  if (auto err = txn.commit())
    return err;
  return id;
}

caf::expected<message_ids> sqlite_store::append_batch(const std::vector<message>& batch) {
  write_transaction txn{*db_};
  if (auto err = txn.begin())
    return err;
  message_ids out;
  out.ids.reserve(batch.size());
  for (const auto& m : batch) {
    auto id = insert_message(m);
    if (!id)
      return std::move(id.error());
    out.ids.push_back(*id);
  }
  if (auto err = txn.commit())
    return err;
  return out;
}

// --- group commit

caf::error sqlite_store::begin_group() {
  assert(!group_open());
  group_.emplace(*db_);
  auto err = group_->begin();
  if (err)
    group_.reset();
  return err;
}

bool sqlite_store::group_open() const {
  return group_.has_value() && db_->in_transaction();
}

caf::expected<int64_t> sqlite_store::insert_in_group(const message& m) {
  assert(group_open());
  return insert_message(m);
}

caf::error sqlite_store::savepoint(const char* sql, const std::string& what) {
  auto stmt = db_->prepare(sql);
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  auto rc = s->step();
  return rc == SQLITE_DONE ? caf::error{} : db_->failure(rc, what);
}

caf::expected<message_ids> sqlite_store::insert_batch_in_group(const std::vector<message>& batch) {
  assert(group_open());
  if (auto err = savepoint("SAVEPOINT batch_append", "begin batch"))
    return err;
  message_ids out;
  out.ids.reserve(batch.size());
  for (const auto& m : batch) {
    auto id = insert_message(m);
    if (!id) {
      if (db_->in_transaction()) {
        savepoint("ROLLBACK TO batch_append", "undo batch");
        savepoint("RELEASE batch_append", "end batch");
      }
      return std::move(id.error());
    }
    out.ids.push_back(*id);
  }
  if (auto err = savepoint("RELEASE batch_append", "end batch"))
    return err;
  return out;
}

caf::error sqlite_store::commit_group() {
  assert(group_.has_value());
  auto err = group_->commit();
  group_.reset(); // a failed COMMIT is rolled back by the destructor
  return err;
}

void sqlite_store::abort_group() {
  group_.reset();
}

// --- reads

caf::expected<session_record> sqlite_store::session(const std::string& session_id) {
  return load_session(*db_, session_id);
}

caf::expected<std::vector<session_record>> sqlite_store::sessions(const session_filter& f) {
  return list_sessions(*db_, f);
}

caf::expected<session_stats> sqlite_store::stats(const std::string& session_id) {
  return load_session_stats(*db_, session_id);
}

caf::expected<trigger_state> sqlite_store::triggers(const std::string& session_id) {
  return load_triggers(*db_, session_id);
}

caf::expected<std::vector<message>> sqlite_store::live_context(const std::string& session_id) {
  return load_live_context(*db_, session_id);
}

caf::expected<std::vector<message>> sqlite_store::range(const std::string& session_id,
                                                        int64_t first_id, int64_t last_id,
                                                        int64_t limit) {
  return load_range(*db_, session_id, first_id, last_id, limit);
}

caf::expected<std::vector<message>>
sqlite_store::idempotent_rows(const std::string& session_key, const std::string& idempotency_key,
                              time_ms since_ms, int64_t limit) {
  return load_idempotent_rows(*db_, session_key, idempotency_key, since_ms, limit);
}

caf::expected<std::vector<checkpoint_record>>
sqlite_store::checkpoints(const std::string& session_id) {
  return list_checkpoints(*db_, session_id);
}

caf::expected<int64_t> sqlite_store::export_jsonl(const std::string& session_id,
                                                  std::ostream& out) {
  return export_session_jsonl(*db_, session_id, out);
}

} // namespace mneme
