// JSONL export of a session; see jsonl_export.hpp.
#include "store/jsonl_export.hpp"

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "store/db_connection.hpp"
#include "store/row_codec.hpp"
#include "store/sqlite_error.hpp"
#include "store/store_queries.hpp"

namespace mneme {

std::string to_jsonl_line(const message& m, int64_t archived_by) {
  auto calls = nlohmann::json::array();
  for (const auto& c : m.tool_calls)
    calls.push_back({{"id", c.id}, {"name", c.name}, {"arguments", c.arguments}});
  nlohmann::json row = {
    {"id", m.id},
    {"session_id", m.session_id},
    {"role", std::string{to_string(m.role)}},
    {"content", m.content},
    {"tool_call_id", m.tool_call_id},
    {"tool_calls", std::move(calls)},
    {"tool_name", m.tool_name},
    {"timestamp_ms", m.timestamp_ms},
    {"token_estimate", m.token_estimate},
    {"active", m.active},
    {"compacted", m.compacted},
    {"is_summary", m.is_summary},
    {"replaced_first_id", m.replaced_first_id},
    {"replaced_last_id", m.replaced_last_id},
    {"archived_by", archived_by},
    {"state", std::string{to_string(m.state())}},
  };
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
