// Import of a session from its JSONL export on SQLite; see sqlite_jsonl_import.hpp.
#include "store/sqlite/sqlite_jsonl_import.hpp"

#include <cassert>
#include <map>

#include <sqlite3.h>

#include "store/row_codec.hpp"
#include "store/sqlite/db_connection.hpp"
#include "store/sqlite/session_rows.hpp"
#include "store/sqlite/sqlite_error.hpp"
#include "store/sqlite/store_queries.hpp"

namespace mneme {

namespace {

caf::expected<int64_t> insert_row(db_connection& db, const message& m) {
  auto stmt = db.prepare(
    "INSERT INTO messages(session_id, role, content, tool_call_id, tool_calls, tool_name,"
    " timestamp_ms, token_estimate, is_summary, replaced_first_id, replaced_last_id)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, m.session_id);
  s->bind(2, to_string(m.role));
  s->bind(3, m.content);
  s->bind(4, m.tool_call_id);
  s->bind(5, encode_tool_calls(m.tool_calls));
  s->bind(6, m.tool_name);
  s->bind(7, m.timestamp_ms);
  s->bind(8, m.token_estimate);
  s->bind(9, int64_t{m.is_summary ? 1 : 0});
  s->bind(10, m.replaced_first_id);
  s->bind(11, m.replaced_last_id);
  if (auto rc = s->step(); rc != SQLITE_DONE)
    return db.failure(rc, "import: insert row");
  return sqlite3_last_insert_rowid(db.native_handle());
}

caf::error set_state(db_connection& db, const import_state& st, const message& m) {
  auto id = st.id;
  auto archived_by = st.archived_by;
  auto position = st.position;
  auto stmt = db.prepare("UPDATE message_state SET active = ?2, compacted = ?3,"
                         " archived_by = ?4, position = ?5 WHERE id = ?1");
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, id);
  s->bind(2, int64_t{m.active ? 1 : 0});
  s->bind(3, int64_t{m.compacted ? 1 : 0});
  s->bind(4, archived_by);
  if (position == id)
    s->bind_null(5);
  else
    s->bind(5, position);
  if (auto rc = s->step(); rc != SQLITE_DONE)
    return db.failure(rc, "import: set row state");
  return {};
}

} // namespace

caf::expected<session_record> import_session_jsonl(db_connection& db, std::string_view jsonl,
                                                   session_record into, time_ms now,
                                                   const store_params& params) {
  assert(db.mode() == open_mode::writer);
  auto plan = plan_session_import(jsonl, std::move(into), now, params);
  if (!plan)
    return std::move(plan.error());
  const auto& target = plan->into;
  write_transaction txn{db};
  if (auto err = txn.begin())
    return err;
  if (!target.parent_id.empty())
    if (auto err = require_session(db, target.parent_id))
      return err;
  auto created = insert_session(db, target, "import: create session");
  if (!created)
    return std::move(created.error());
  if (!*created)
    return bad_request("import: session '" + target.id + "' already exists");
  // Insert every row (live), learning the renumbering old id -> new id.
  std::map<int64_t, int64_t> new_id;
  for (const auto& r : plan->rows) {
    auto id = insert_row(db, import_message(r, target.id, new_id));
    if (!id)
      return std::move(id.error());
    new_id.emplace(r.m.id, *id);
  }
  auto states = import_states(plan->rows, new_id);
  for (size_t i = 0; i < states.size(); ++i)
    if (auto err = set_state(db, states[i], plan->rows[i].m))
      return err;
  if (auto err = txn.commit())
    return err;
  return load_session(db, target.id);
}

} // namespace mneme
