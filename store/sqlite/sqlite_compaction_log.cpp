// The compaction log on SQLite; see sqlite_compaction_log.hpp.
#include "store/sqlite/sqlite_compaction_log.hpp"

#include <algorithm>

#include <sqlite3.h>

#include "store/compaction_log.hpp"
#include "store/sqlite/db_connection.hpp"

namespace mneme {

caf::expected<int64_t> insert_compaction_log(db_connection& db, const compaction_log_entry& e) {
  auto stmt = db.prepare(
    "INSERT INTO compaction_log(session_id, at_ms, trigger, origin, mode, outcome,"
    " tokens_before, tokens_after, first_id, last_id, rows_replaced, summary_id,"
    " summarizer_model, duration_ms, summary_tokens, identifiers_in, identifiers_kept,"
    " attempt, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13,"
    " ?14, ?15, ?16, ?17, ?18, ?19)");
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  int i = 0;
  s->bind(++i, e.session_id);
  s->bind(++i, e.at_ms);
  s->bind(++i, e.trigger);
  s->bind(++i, e.origin);
  s->bind(++i, e.mode);
  s->bind(++i, e.outcome);
  for (auto v : {e.tokens_before, e.tokens_after, e.first_id, e.last_id, e.rows_replaced,
                 e.summary_id})
    s->bind(++i, v);
  s->bind(++i, e.summarizer_model);
  for (auto v : {e.duration_ms, e.summary_tokens, e.identifiers_in, e.identifiers_kept,
                 static_cast<int64_t>(e.attempt)})
    s->bind(++i, v);
  s->bind(++i, stored_detail(e));
  if (auto rc = s->step(); rc != SQLITE_DONE)
    return db.failure(rc, "write compaction log");
  return static_cast<int64_t>(sqlite3_last_insert_rowid(db.native_handle()));
}

caf::expected<std::vector<compaction_log_entry>>
compaction_log_of(db_connection& db, const std::string& session_id, int64_t limit) {
  auto stmt = db.prepare(
    "SELECT id, session_id, at_ms, trigger, origin, mode, outcome, tokens_before,"
    " tokens_after, first_id, last_id, rows_replaced, summary_id, summarizer_model,"
    " duration_ms, summary_tokens, identifiers_in, identifiers_kept, attempt, detail"
    " FROM compaction_log WHERE session_id = ?1 ORDER BY id DESC LIMIT ?2");
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, session_id);
  s->bind(2, limit);
  std::vector<compaction_log_entry> out;
  int rc;
  while ((rc = s->step()) == SQLITE_ROW) {
    compaction_log_entry e;
    int i = 0;
    e.id = s->column_int(i++);
    e.session_id = s->column_text(i++);
    e.at_ms = s->column_int(i++);
    e.trigger = s->column_text(i++);
    e.origin = s->column_text(i++);
    e.mode = s->column_text(i++);
    e.outcome = s->column_text(i++);
    for (auto* v : {&e.tokens_before, &e.tokens_after, &e.first_id, &e.last_id,
                    &e.rows_replaced, &e.summary_id})
      *v = s->column_int(i++);
    e.summarizer_model = s->column_text(i++);
    for (auto* v : {&e.duration_ms, &e.summary_tokens, &e.identifiers_in, &e.identifiers_kept})
      *v = s->column_int(i++);
    e.attempt = static_cast<int32_t>(s->column_int(i++));
    e.detail = s->column_text(i++);
    out.push_back(std::move(e));
  }
  if (rc != SQLITE_DONE)
    return db.failure(rc, "read compaction log");
  std::reverse(out.begin(), out.end());
  return out;
}

} // namespace mneme
