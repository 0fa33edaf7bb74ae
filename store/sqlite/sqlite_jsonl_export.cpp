// JSONL export of a session on SQLite; see sqlite_jsonl_export.hpp.
#include "store/sqlite/sqlite_jsonl_export.hpp"

#include <sqlite3.h>

#include "store/jsonl_export.hpp"
#include "store/sqlite/db_connection.hpp"
#include "store/sqlite/message_rows.hpp"
#include "store/sqlite/sqlite_error.hpp"
#include "store/sqlite/store_queries.hpp"

namespace mneme {

caf::expected<int64_t> export_session_jsonl(db_connection& db, const std::string& session_id,
                                            std::ostream& out) {
  if (auto err = require_session(db, session_id))
    return err;
  auto stmt = db.prepare("SELECT " MNEME_MESSAGE_COLUMNS " FROM message_rows"
                         " WHERE session_id = ?1 ORDER BY id");
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, session_id);
  int64_t lines = 0;
  for (;;) {
    auto rc = s->step();
    if (rc == SQLITE_DONE)
      break;
    if (rc != SQLITE_ROW)
      return db.failure(rc, "export session");
    int64_t archived_by = 0;
    auto m = decode_message(s.get(), &archived_by);
    if (!m)
      return std::move(m.error());
    out << to_jsonl_line(*m, archived_by) << '\n';
    ++lines;
  }
  if (!out)
    return caf::make_error(errc::storage_failed, "export session: output stream failed");
  return lines;
}

} // namespace mneme
