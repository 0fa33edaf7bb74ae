// JSONL export of a session; see jsonl_export.hpp.
#include "store/jsonl_export.hpp"

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "store/sqlite/db_connection.hpp"
#include "store/message_json.hpp"
#include "store/row_codec.hpp"
#include "store/sqlite/sqlite_error.hpp"
#include "store/sqlite/store_queries.hpp"

namespace mneme {

std::string to_jsonl_line(const message& m, int64_t archived_by) {
  auto row = message_json(m);
  row["archived_by"] = archived_by;
  return row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

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
