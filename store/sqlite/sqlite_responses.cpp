// The response records on SQLite; see sqlite_responses.hpp.
#include "store/sqlite/sqlite_responses.hpp"

#include <sqlite3.h>

#include "store/conversation_rewrite.hpp"
#include "store/sqlite/db_connection.hpp"
#include "store/sqlite/sqlite_error.hpp"
#include "store/store_errors.hpp"

namespace mneme {

namespace {

// A stored conversation record's body replaced (conversation_rewrite.hpp), in `txn`.
caf::error rewrite_conversation(db_connection& db, const response_record& stored,
                                const response_record& r) {
  if (auto err = check_conversation_rewrite(stored, r))
    return err;
  auto stmt = db.prepare("UPDATE responses SET body = ?2 WHERE id = ?1 AND deleted_at_ms = 0");
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, r.id);
  s->bind(2, r.body);
  if (auto rc = s->step(); rc != SQLITE_DONE)
    return db.failure(rc, "rewrite conversation");
  return {};
}

} // namespace

caf::error put_response(db_connection& db, const response_record& r) {
  if (auto err = check_response_record(r))
    return err;
  write_transaction txn{db};
  if (auto err = txn.begin())
    return err;
  if (is_conversation_record_id(r.id)) {
    auto stored = response_of(db, r.id);
    if (stored) {
      if (auto err = rewrite_conversation(db, *stored, r))
        return err;
      return txn.commit();
    }
    if (stored.error() != errc::not_found)
      return std::move(stored.error());
  }
  auto stmt = db.prepare("INSERT INTO responses(id, user_id, session_key, session_id,"
                         " last_row_id, previous_id, created_at_ms, body)"
                         " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  if (!stmt)
    return std::move(stmt.error());
  {
    statement_scope s{**stmt};
    s->bind(1, r.id);
    s->bind(2, r.user_id);
    s->bind(3, r.session_key);
    s->bind(4, r.session_id);
    s->bind(5, r.last_row_id);
    s->bind(6, r.previous_id);
    s->bind(7, r.created_at_ms);
    s->bind(8, r.body);
    if (auto rc = s->step(); rc != SQLITE_DONE)
      return db.failure(rc, "put response");
  }
  return txn.commit();
}

caf::expected<response_record> response_of(db_connection& db, const std::string& id) {
  auto stmt = db.prepare("SELECT user_id, session_key, session_id, last_row_id, previous_id,"
                         " created_at_ms, deleted_at_ms, body FROM responses WHERE id = ?1");
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, id);
  auto rc = s->step();
  if (rc == SQLITE_DONE)
    return not_found("response '" + id + "'");
  if (rc != SQLITE_ROW)
    return db.failure(rc, "read response");
  response_record r;
  r.id = id;
  r.user_id = s->column_text(0);
  r.session_key = s->column_text(1);
  r.session_id = s->column_text(2);
  r.last_row_id = s->column_int(3);
  r.previous_id = s->column_text(4);
  r.created_at_ms = s->column_int(5);
  r.deleted_at_ms = s->column_int(6);
  r.body = s->column_text(7);
  return r;
}

caf::expected<response_record> delete_response(db_connection& db, const std::string& id,
                                               time_ms now) {
  if (now <= 0)
    return bad_request("delete response: now must be > 0");
  write_transaction txn{db};
  if (auto err = txn.begin())
    return err;
  auto stmt = db.prepare("UPDATE responses SET deleted_at_ms = ?2"
                         " WHERE id = ?1 AND deleted_at_ms = 0");
  if (!stmt)
    return std::move(stmt.error());
  {
    statement_scope s{**stmt};
    s->bind(1, id);
    s->bind(2, now);
    if (auto rc = s->step(); rc != SQLITE_DONE)
      return db.failure(rc, "delete response");
  }
  if (sqlite3_changes(db.native_handle()) == 0)
    return not_found("response '" + id + "'");
  auto r = response_of(db, id);
  if (!r)
    return r;
  if (auto err = txn.commit())
    return err;
  return r;
}

} // namespace mneme
