// Database-wide session counts; see store_stats.hpp.
#include "store/sqlite/store_stats.hpp"

#include <sqlite3.h>

#include "store/sqlite/db_connection.hpp"

namespace mneme {

caf::expected<session_counts> count_sessions(db_connection& db, time_ms now) {
  auto stmt = db.prepare(
    "SELECT count(*), coalesce(sum(ended_at_ms = 0), 0),"
    " coalesce(sum(ended_at_ms = 0 AND cooldown_until_ms > ?1), 0),"
    " coalesce(sum(ended_at_ms = 0 AND lock_until_ms > ?1), 0) FROM sessions");
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, int64_t{now});
  auto rc = s->step();
  if (rc != SQLITE_ROW)
    return db.failure(rc, "count sessions");
  session_counts out;
  out.stored = s->column_int(0);
  out.open = s->column_int(1);
  out.cooldowns_active = s->column_int(2);
  out.locks_active = s->column_int(3);
  return out;
}

} // namespace mneme
