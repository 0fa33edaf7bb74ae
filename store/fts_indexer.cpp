// Batched, crash-safe filling of the recall indexes; see fts_indexer.hpp.
#include "store/fts_indexer.hpp"

#include <cassert>
#include <string>

#include <sqlite3.h>

#include "store/db_connection.hpp"

namespace mneme {

namespace {

constexpr const char* watermark_sql = "SELECT indexed_through FROM fts_state WHERE singleton = 1";

constexpr const char* backlog_sql =
  "SELECT count(*) FROM messages WHERE id > (SELECT indexed_through FROM fts_state)";

// ?1 watermark, ?2 max rows. Row ids and text sizes in id order.
constexpr const char* batch_sizes_sql =
  "SELECT id, length(CAST(content AS BLOB)) FROM messages WHERE id > ?1 ORDER BY id LIMIT ?2";

// ?1 exclusive lower bound, ?2 inclusive upper bound.
constexpr const char* fill_words_sql =
  "INSERT INTO fts_words(rowid, content) SELECT id, content FROM messages"
  " WHERE id > ?1 AND id <= ?2";
constexpr const char* fill_cjk_sql =
  "INSERT INTO fts_cjk(rowid, content) SELECT id, content FROM messages"
  " WHERE id > ?1 AND id <= ?2";
constexpr const char* fill_trigram_sql =
  "INSERT INTO fts_trigram(rowid, content) SELECT id, content FROM messages"
  " WHERE id > ?1 AND id <= ?2";

constexpr const char* advance_sql = "UPDATE fts_state SET indexed_through = ?1 WHERE singleton = 1";

caf::expected<int64_t> scalar_query(db_connection& db, const char* sql, const char* what) {
  auto stmt = db.prepare(sql);
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  auto rc = s->step();
  if (rc != SQLITE_ROW)
    return db.failure(rc, what);
  return s->column_int(0);
}

caf::error run_range(db_connection& db, const char* sql, int64_t after, int64_t through) {
  auto stmt = db.prepare(sql);
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, after);
  s->bind(2, through);
  auto rc = s->step();
  return rc == SQLITE_DONE ? caf::error{} : db.failure(rc, "index batch");
}

struct batch_bounds {
  int64_t through = 0; // last id of the batch; == the watermark when empty
  int64_t rows = 0;
};

// The next batch above `after`: up to max_rows rows, stopping before the row that
// would pass max_bytes (at least one row).
caf::expected<batch_bounds> batch_end(db_connection& db, int64_t after, int64_t max_rows,
                                 int64_t max_bytes) {
  auto stmt = db.prepare(batch_sizes_sql);
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, after);
  s->bind(2, max_rows);
  batch_bounds b{after, 0};
  int64_t bytes = 0;
  for (;;) {
    auto rc = s->step();
    if (rc == SQLITE_DONE)
      return b;
    if (rc != SQLITE_ROW)
      return db.failure(rc, "read index batch");
    bytes += s->column_int(1);
    if (b.rows > 0 && bytes > max_bytes)
      return b;
    b.through = s->column_int(0);
    ++b.rows;
  }
}

} // namespace

caf::expected<int64_t> fts_watermark(db_connection& db) {
  return scalar_query(db, watermark_sql, "read index watermark");
}

caf::expected<int64_t> fts_backlog(db_connection& db) {
  return scalar_query(db, backlog_sql, "count unindexed messages");
}

caf::expected<int64_t> index_pending(db_connection& db, int64_t max_rows, int64_t max_bytes) {
  assert(db.mode() == open_mode::writer);
  assert(!db.in_transaction());
  assert(max_rows >= 1 && max_bytes >= 1);
  write_transaction txn{db};
  if (auto err = txn.begin())
    return err;
  auto from = fts_watermark(db);
  if (!from)
    return std::move(from.error());
  auto batch = batch_end(db, *from, max_rows, max_bytes);
  if (!batch)
    return std::move(batch.error());
  if (batch->rows == 0)
    return int64_t{0}; // nothing pending; the transaction rolls back empty
  for (auto* sql : {fill_words_sql, fill_cjk_sql, fill_trigram_sql})
    if (auto err = run_range(db, sql, *from, batch->through))
      return err;
  {
    auto stmt = db.prepare(advance_sql);
    if (!stmt)
      return std::move(stmt.error());
    statement_scope s{**stmt};
    s->bind(1, batch->through);
    auto rc = s->step();
    if (rc != SQLITE_DONE)
      return db.failure(rc, "advance index watermark");
  }
  if (auto err = txn.commit())
    return err;
  return batch->rows;
}

caf::expected<int64_t> index_all_pending(db_connection& db) {
  int64_t total = 0;
  for (;;) {
    auto n = index_pending(db, fts_index_batch_rows, fts_index_batch_bytes);
    if (!n)
      return n;
    if (*n == 0)
      return total;
    total += *n;
  }
}

} // namespace mneme
