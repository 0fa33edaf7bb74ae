// The read operations of the store; see store_queries.hpp.
#include "store/sqlite/store_queries.hpp"

#include <sqlite3.h>

#include "store/range_checks.hpp"
#include "store/sqlite/db_connection.hpp"
#include "store/sqlite/message_rows.hpp"
#include "store/sqlite/sqlite_error.hpp"

namespace mneme {

namespace {

#define MNEME_SESSION_COLUMNS                                                         \
  "id, user_id, session_key, parent_id, model, started_at_ms, ended_at_ms, "          \
  "end_reason, cooldown_until_ms, cooldown_reason, anti_thrash_strikes, "             \
  "lock_until_ms, probe_pending, fallback_streak, compaction_count, last_prompt_tokens"

trigger_state decode_triggers(const statement& row, int first) {
  trigger_state t;
  t.cooldown_until_ms = row.column_int(first + 0);
  t.cooldown_reason = row.column_text(first + 1);
  t.anti_thrash_strikes = static_cast<int32_t>(row.column_int(first + 2));
  t.lock_until_ms = row.column_int(first + 3);
  t.probe_pending = row.column_int(first + 4) != 0;
  t.fallback_streak = static_cast<int32_t>(row.column_int(first + 5));
  t.compaction_count = row.column_int(first + 6);
  t.last_prompt_tokens = row.column_int(first + 7);
  return t;
}

session_record decode_session(const statement& row) {
  session_record s;
  s.id = row.column_text(0);
  s.user_id = row.column_text(1);
  s.session_key = row.column_text(2);
  s.parent_id = row.column_text(3);
  s.model = row.column_text(4);
  s.started_at_ms = row.column_int(5);
  s.ended_at_ms = row.column_int(6);
  s.end_reason = row.column_text(7);
  s.triggers = decode_triggers(row, 8);
  return s;
}

std::string unknown_session(const std::string& id) {
  return "unknown session '" + id + "'";
}

// Steps `s` to the end, decoding each row into a message.
caf::expected<std::vector<message>> collect_messages(db_connection& db, statement& s,
                                                     const std::string& what) {
  std::vector<message> out;
  for (;;) {
    auto rc = s.step();
    if (rc == SQLITE_DONE)
      return out;
    if (rc != SQLITE_ROW)
      return db.failure(rc, what);
    auto m = decode_message(s);
    if (!m)
      return std::move(m.error());
    out.push_back(std::move(*m));
  }
}

} // namespace

caf::error require_session(db_connection& db, const std::string& session_id) {
  auto stmt = db.prepare("SELECT 1 FROM sessions WHERE id = ?1");
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, session_id);
  auto rc = s->step();
  if (rc == SQLITE_ROW)
    return {};
  if (rc == SQLITE_DONE)
    return not_found(unknown_session(session_id));
  return db.failure(rc, "look up session");
}

caf::expected<session_record> load_session(db_connection& db, const std::string& session_id) {
  auto stmt = db.prepare("SELECT " MNEME_SESSION_COLUMNS " FROM sessions WHERE id = ?1");
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, session_id);
  auto rc = s->step();
  if (rc == SQLITE_DONE)
    return not_found(unknown_session(session_id));
  if (rc != SQLITE_ROW)
    return db.failure(rc, "load session");
  return decode_session(s.get());
}

caf::expected<std::vector<session_record>> list_sessions(db_connection& db,
                                                         const session_filter& filter) {
  if (filter.limit < 1 || filter.limit > 100000)
    return bad_request("list sessions: limit must be 1..100000");
  // One statement per filter shape: an "(?2 = '' OR session_key = ?2)" term cannot
  // use an index, and the gateway looks a key up for every key it has not seen
  // (a full scan per new key made opening N keys cost N^2).
  static constexpr const char* by_key =
    "SELECT " MNEME_SESSION_COLUMNS " FROM sessions"
    " WHERE session_key = ?2 AND (?1 = '' OR user_id = ?1) AND (?3 = 0 OR ended_at_ms = 0)"
    " ORDER BY started_at_ms DESC, id DESC LIMIT ?4";
  static constexpr const char* by_user =
    "SELECT " MNEME_SESSION_COLUMNS " FROM sessions"
    " WHERE user_id = ?1 AND ?2 = '' AND (?3 = 0 OR ended_at_ms = 0)"
    " ORDER BY started_at_ms DESC, id DESC LIMIT ?4";
  static constexpr const char* all =
    "SELECT " MNEME_SESSION_COLUMNS " FROM sessions"
    " WHERE ?1 = '' AND ?2 = '' AND (?3 = 0 OR ended_at_ms = 0)"
    " ORDER BY started_at_ms DESC, id DESC LIMIT ?4";
  auto stmt = db.prepare(!filter.session_key.empty() ? by_key
                         : !filter.user_id.empty()   ? by_user
                                                     : all);
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, filter.user_id);
  s->bind(2, filter.session_key);
  s->bind(3, int64_t{filter.open_only ? 1 : 0});
  s->bind(4, filter.limit);
  std::vector<session_record> out;
  for (;;) {
    auto rc = s->step();
    if (rc == SQLITE_DONE)
      return out;
    if (rc != SQLITE_ROW)
      return db.failure(rc, "list sessions");
    out.push_back(decode_session(s.get()));
  }
}

caf::expected<session_stats> load_session_stats(db_connection& db,
                                                const std::string& session_id) {
  if (auto err = require_session(db, session_id))
    return err;
  auto stmt = db.prepare(
    "SELECT coalesce(sum(active = 1), 0), coalesce(sum(compacted = 1), 0),"
    "       coalesce(sum(active = 0 AND compacted = 0), 0), coalesce(sum(is_summary), 0),"
    "       coalesce(sum(CASE WHEN active = 1 THEN token_estimate ELSE 0 END), 0),"
    "       coalesce(sum(length(CAST(content AS BLOB))), 0),"
    "       coalesce(min(id), 0), coalesce(max(id), 0)"
    " FROM message_rows WHERE session_id = ?1");
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, session_id);
  auto rc = s->step();
  if (rc != SQLITE_ROW)
    return db.failure(rc, "session stats");
  session_stats st;
  st.session_id = session_id;
  st.live_rows = s->column_int(0);
  st.archived_rows = s->column_int(1);
  st.rolled_back_rows = s->column_int(2);
  st.summary_rows = s->column_int(3);
  st.live_token_estimate = s->column_int(4);
  st.content_bytes = s->column_int(5);
  st.first_id = s->column_int(6);
  st.last_id = s->column_int(7);
  return st;
}

caf::expected<trigger_state> load_triggers(db_connection& db, const std::string& session_id) {
  auto rec = load_session(db, session_id);
  if (!rec)
    return std::move(rec.error());
  return rec->triggers;
}

caf::expected<std::vector<message>> load_live_context(db_connection& db,
                                                      const std::string& session_id) {
  if (auto err = require_session(db, session_id))
    return err;
  auto stmt = db.prepare("SELECT " MNEME_MESSAGE_COLUMNS " FROM message_rows"
                         " WHERE session_id = ?1 AND active = 1 ORDER BY position, id");
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, session_id);
  return collect_messages(db, s.get(), "load live context");
}

caf::expected<std::vector<message>> load_range(db_connection& db, const std::string& session_id,
                                               int64_t first_id, int64_t last_id,
                                               int64_t limit) {
  if (auto err = check_range_request(first_id, last_id, limit))
    return err;
  if (auto err = require_session(db, session_id))
    return err;
  auto stmt = db.prepare("SELECT " MNEME_MESSAGE_COLUMNS " FROM message_rows"
                         " WHERE session_id = ?1 AND id BETWEEN ?2 AND ?3 ORDER BY id LIMIT ?4");
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, session_id);
  s->bind(2, first_id);
  s->bind(3, last_id);
  s->bind(4, limit);
  return collect_messages(db, s.get(), "load range");
}

caf::expected<std::vector<message>> load_idempotent_rows(db_connection& db,
                                                         const std::string& session_key,
                                                         const std::string& idempotency_key,
                                                         time_ms since_ms, int64_t limit) {
  if (idempotency_key.empty() || limit < 1)
    return bad_request("idempotent rows: need a key and a limit of at least 1");
  // The keyed row through the partial index messages_by_idempotency_key (the literal
  // `!= ''` lets the planner use it), then its session's rows from it on.
  auto stmt = db.prepare(
    "WITH k AS (SELECT m.id, m.session_id FROM messages m JOIN sessions s ON s.id = m.session_id"
    " WHERE m.idempotency_key = ?2 AND m.idempotency_key != '' AND s.session_key = ?1"
    " AND m.timestamp_ms >= ?3 ORDER BY m.id DESC LIMIT 1)"
    " SELECT " MNEME_MESSAGE_COLUMNS " FROM message_rows"
    " WHERE session_id = (SELECT session_id FROM k) AND id >= (SELECT id FROM k)"
    " ORDER BY id LIMIT ?4");
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, session_key);
  s->bind(2, idempotency_key);
  s->bind(3, since_ms);
  s->bind(4, limit);
  return collect_messages(db, s.get(), "load idempotent rows");
}

caf::expected<std::vector<checkpoint_record>> list_checkpoints(db_connection& db,
                                                               const std::string& session_id) {
  if (auto err = require_session(db, session_id))
    return err;
  auto stmt = db.prepare("SELECT session_id, name, last_message_id, created_at_ms"
                         " FROM checkpoints WHERE session_id = ?1"
                         " ORDER BY last_message_id, created_at_ms, name");
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, session_id);
  std::vector<checkpoint_record> out;
  for (;;) {
    auto rc = s->step();
    if (rc == SQLITE_DONE)
      return out;
    if (rc != SQLITE_ROW)
      return db.failure(rc, "list checkpoints");
    out.push_back(checkpoint_record{s->column_text(0), s->column_text(1), s->column_int(2),
                                    s->column_int(3)});
  }
}

} // namespace mneme
