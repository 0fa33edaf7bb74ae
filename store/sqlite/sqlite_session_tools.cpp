// Per-key tools of agent turns on SQLite; see sqlite_session_tools.hpp.
#include "store/sqlite/sqlite_session_tools.hpp"

#include <sqlite3.h>

#include "store/sqlite/db_connection.hpp"
#include "store/sqlite/sqlite_error.hpp"

namespace mneme {

caf::error put_session_tools(db_connection& db, const std::string& session_key,
                             const std::string& session_id, const std::string& tools_json,
                             time_ms now) {
  if (auto err = check_session_tools(session_key, tools_json, now))
    return err;
  write_transaction txn{db};
  if (auto err = txn.begin())
    return err;
  auto stmt = db.prepare("INSERT INTO session_tools(session_key, session_id, tools, set_at_ms)"
                         " VALUES (?1, ?2, ?3, ?4)");
  if (!stmt)
    return std::move(stmt.error());
  {
    statement_scope s{**stmt};
    s->bind(1, session_key);
    s->bind(2, session_id);
    s->bind(3, tools_json);
    s->bind(4, now);
    if (auto rc = s->step(); rc != SQLITE_DONE)
      return db.failure(rc, "put session tools");
  }
  return txn.commit();
}

caf::expected<std::string> session_tools_of(db_connection& db, const std::string& session_key) {
  auto stmt = db.prepare("SELECT tools FROM session_tools WHERE session_key = ?1"
                         " ORDER BY id DESC LIMIT 1");
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, session_key);
  auto rc = s->step();
  if (rc == SQLITE_DONE)
    return std::string{};
  if (rc != SQLITE_ROW)
    return db.failure(rc, "read session tools");
  return s->column_text(0);
}

} // namespace mneme
