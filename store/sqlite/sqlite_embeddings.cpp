// Stored vectors on SQLite; see sqlite_embeddings.hpp.
#include "store/sqlite/sqlite_embeddings.hpp"

#include <functional>

#include <sqlite3.h>

#include "caf/make_message.hpp" // errc.hpp needs it for make_error with a context
#include "messages/errc.hpp"
#include "store/embeddings.hpp"
#include "store/sqlite/db_connection.hpp"

namespace mneme {

namespace {

constexpr const char* message_rows_sql =
  "SELECT m.id, s.user_id, m.role, m.is_summary, m.content FROM messages m"
  " JOIN sessions s ON s.id = m.session_id WHERE m.id > ?1 ORDER BY m.id LIMIT ?2";
constexpr const char* fact_rows_sql =
  "SELECT id, user_id, key, value, active FROM facts WHERE id > ?1 ORDER BY id LIMIT ?2";
constexpr const char* insert_vector_sql =
  "INSERT OR IGNORE INTO embeddings(model, dims, source, row_id, user_id, vector)"
  " VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
constexpr const char* move_watermark_sql =
  "INSERT INTO embed_state(model, dims, source, through) VALUES (?1, ?2, ?3, ?4)"
  " ON CONFLICT(model, dims, source) DO UPDATE SET through = max(through, excluded.through)";
constexpr const char* embed_watermark_sql =
  "SELECT through FROM embed_state WHERE model = ?1 AND dims = ?2 AND source = ?3";
constexpr const char* messages_above_sql = "SELECT count(*) FROM messages WHERE id > ?1";
constexpr const char* facts_above_sql = "SELECT count(*) FROM facts WHERE id > ?1";
constexpr const char* stored_count_sql =
  "SELECT count(*) FROM embeddings WHERE model = ?1 AND dims = ?2";
constexpr const char* stored_vectors_sql =
  "SELECT row_id, user_id, vector FROM embeddings WHERE model = ?1 AND dims = ?2"
  " AND source = ?3 AND row_id > ?4 ORDER BY row_id LIMIT ?5";

caf::expected<int64_t> one_int(db_connection& db, const char* sql, const char* what,
                               const std::function<void(statement&)>& bind) {
  auto s = db.prepare(sql);
  if (!s)
    return std::move(s.error());
  statement_scope scope{**s};
  bind(**s);
  auto rc = (*s)->step();
  if (rc == SQLITE_DONE)
    return int64_t{0};
  if (rc != SQLITE_ROW)
    return db.failure(rc, what);
  return (*s)->column_int(0);
}

} // namespace

caf::expected<embed_candidates> sqlite_rows_to_embed(db_connection& db, int32_t source,
                                                     int64_t after_id, int64_t limit) {
  if (auto err = check_embed_read(source, after_id, limit))
    return err;
  const bool messages = source == embed_source_message;
  auto s = db.prepare(messages ? message_rows_sql : fact_rows_sql);
  if (!s)
    return std::move(s.error());
  statement_scope scope{**s};
  (*s)->bind(1, after_id);
  (*s)->bind(2, limit);
  embed_candidates out;
  out.scanned_through = after_id;
  for (;;) {
    auto rc = (*s)->step();
    if (rc == SQLITE_DONE)
      break;
    if (rc != SQLITE_ROW)
      return db.failure(rc, "read rows to embed");
    embed_candidate c;
    c.id = (*s)->column_int(0);
    c.user_id = (*s)->column_text(1);
    if (messages) {
      c.role = (*s)->column_text(2);
      c.is_summary = (*s)->column_int(3) != 0;
      c.text = (*s)->column_text(4);
    } else {
      c.role = "fact";
      c.text = (*s)->column_text(2) + ": " + (*s)->column_text(3);
      c.active = (*s)->column_int(4) != 0;
    }
    out.scanned_through = c.id;
    out.rows.push_back(std::move(c));
  }
  return out;
}

caf::error store_sqlite_vectors(db_connection& db, const embed_write& w) {
  if (auto err = check_embed_write(w))
    return err;
  write_transaction txn{db};
  if (auto err = txn.begin())
    return err;
  auto ins = db.prepare(insert_vector_sql);
  if (!ins)
    return std::move(ins.error());
  for (const auto& r : w.rows) {
    statement_scope scope{**ins};
    (*ins)->bind(1, w.model);
    (*ins)->bind(2, int64_t{w.dims});
    (*ins)->bind(3, int64_t{w.source});
    (*ins)->bind(4, r.id);
    (*ins)->bind(5, r.user_id);
    (*ins)->bind_blob(6, encode_vector(r.vec));
    if (auto rc = (*ins)->step(); rc != SQLITE_DONE)
      return db.failure(rc, "store vectors");
  }
  auto mark = db.prepare(move_watermark_sql);
  if (!mark)
    return std::move(mark.error());
  {
    statement_scope scope{**mark};
    (*mark)->bind(1, w.model);
    (*mark)->bind(2, int64_t{w.dims});
    (*mark)->bind(3, int64_t{w.source});
    (*mark)->bind(4, w.through);
    if (auto rc = (*mark)->step(); rc != SQLITE_DONE)
      return db.failure(rc, "move the embedding watermark");
  }
  return txn.commit();
}

caf::expected<embed_progress> sqlite_embed_progress(db_connection& db, const std::string& model,
                                                    int32_t dims) {
  if (auto err = check_embed_model(model, dims))
    return err;
  embed_progress p;
  for (int32_t source : {embed_source_message, embed_source_fact}) {
    auto through = one_int(db, embed_watermark_sql, "read the embedding watermark", [&](statement& s) {
      s.bind(1, model);
      s.bind(2, int64_t{dims});
      s.bind(3, int64_t{source});
    });
    if (!through)
      return std::move(through.error());
    auto above = one_int(db, source == embed_source_message ? messages_above_sql : facts_above_sql,
                         "count rows to embed", [&](statement& s) { s.bind(1, *through); });
    if (!above)
      return std::move(above.error());
    (source == embed_source_message ? p.messages_through : p.facts_through) = *through;
    (source == embed_source_message ? p.messages_backlog : p.facts_backlog) = *above;
  }
  auto stored = one_int(db, stored_count_sql, "count stored vectors", [&](statement& s) {
    s.bind(1, model);
    s.bind(2, int64_t{dims});
  });
  if (!stored)
    return std::move(stored.error());
  p.stored_vectors = *stored;
  return p;
}

caf::expected<std::vector<stored_vector>> sqlite_stored_vectors(db_connection& db,
                                                                const std::string& model,
                                                                int32_t dims, int32_t source,
                                                                int64_t after_id, int64_t limit) {
  if (auto err = check_embed_model(model, dims))
    return err;
  if (auto err = check_embed_read(source, after_id, limit))
    return err;
  auto s = db.prepare(stored_vectors_sql);
  if (!s)
    return std::move(s.error());
  statement_scope scope{**s};
  (*s)->bind(1, model);
  (*s)->bind(2, int64_t{dims});
  (*s)->bind(3, int64_t{source});
  (*s)->bind(4, after_id);
  (*s)->bind(5, limit);
  std::vector<stored_vector> out;
  for (;;) {
    auto rc = (*s)->step();
    if (rc == SQLITE_DONE)
      return out;
    if (rc != SQLITE_ROW)
      return db.failure(rc, "read stored vectors");
    stored_vector v;
    v.id = (*s)->column_int(0);
    v.user_id = (*s)->column_text(1);
    auto vec = decode_vector((*s)->column_blob(2), dims);
    if (!vec)
      return caf::make_error(errc::storage_corrupt,
                             "stored vector " + std::to_string(v.id) + " is not "
                               + std::to_string(dims) + " float32 values");
    v.vec = std::move(*vec);
    out.push_back(std::move(v));
  }
}

} // namespace mneme
