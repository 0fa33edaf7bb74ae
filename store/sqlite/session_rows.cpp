// The shared writes of SQLite's sessions table; see session_rows.hpp.
#include "store/sqlite/session_rows.hpp"

#include <sqlite3.h>

#include "store/session_checks.hpp"
#include "store/sqlite/db_connection.hpp"
#include "store/sqlite/sqlite_error.hpp"

namespace mneme {

caf::expected<bool> insert_session(db_connection& db, const session_record& rec,
                                   const std::string& what) {
  auto stmt = db.prepare("INSERT INTO sessions(id, user_id, session_key, parent_id, model,"
                         " started_at_ms, ended_at_ms, end_reason)"
                         " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, rec.id);
  s->bind(2, rec.user_id);
  s->bind(3, rec.session_key);
  s->bind(4, rec.parent_id);
  s->bind(5, rec.model);
  s->bind(6, rec.started_at_ms);
  s->bind(7, rec.ended_at_ms);
  s->bind(8, rec.end_reason);
  auto rc = s->step();
  if (rc == SQLITE_CONSTRAINT_PRIMARYKEY)
    return false;
  if (rc != SQLITE_DONE)
    return db.failure(rc, what);
  return true;
}

caf::error write_triggers(db_connection& db, const std::string& session_id,
                          const trigger_state& t) {
  if (auto err = check_label(t.cooldown_reason, "cooldown_reason"))
    return err;
  auto stmt = db.prepare(
    "UPDATE sessions SET cooldown_until_ms = ?2, cooldown_reason = ?3,"
    " anti_thrash_strikes = ?4, lock_until_ms = ?5, probe_pending = ?6,"
    " fallback_streak = ?7, compaction_count = ?8, last_prompt_tokens = ?9 WHERE id = ?1");
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, session_id);
  s->bind(2, t.cooldown_until_ms);
  s->bind(3, t.cooldown_reason);
  s->bind(4, int64_t{t.anti_thrash_strikes});
  s->bind(5, t.lock_until_ms);
  s->bind(6, int64_t{t.probe_pending ? 1 : 0});
  s->bind(7, int64_t{t.fallback_streak});
  s->bind(8, t.compaction_count);
  s->bind(9, t.last_prompt_tokens);
  if (auto rc = s->step(); rc != SQLITE_DONE)
    return db.failure(rc, "save trigger state");
  if (sqlite3_changes(db.native_handle()) == 0)
    return not_found("unknown session '" + session_id + "'");
  return {};
}

caf::error write_session_end(db_connection& db, const std::string& session_id, time_ms now,
                             const std::string& reason, const std::string& what) {
  auto stmt = db.prepare("UPDATE sessions SET ended_at_ms = ?2, end_reason = ?3 WHERE id = ?1");
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, session_id);
  s->bind(2, now > 0 ? now : int64_t{1});
  s->bind(3, reason);
  if (auto rc = s->step(); rc != SQLITE_DONE)
    return db.failure(rc, what);
  return {};
}

} // namespace mneme
