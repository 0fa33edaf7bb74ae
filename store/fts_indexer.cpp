// Batched, crash-safe filling of the recall indexes; see fts_indexer.hpp.
#include "store/fts_indexer.hpp"

#include <cassert>
#include <limits>
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

caf::error advance_watermark(db_connection& db, int64_t through) {
  auto stmt = db.prepare(advance_sql);
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, through);
  auto rc = s->step();
  return rc == SQLITE_DONE ? caf::error{} : db.failure(rc, "advance index watermark");
}

// Rows go in contiguous runs, one range statement per index per run (FTS5
// writes one segment per INSERT statement); the run length follows plan.run and
// grows by policies/index_pacing next_index_run after each run nothing waited behind.
caf::error index_range(db_connection& db, int64_t after, int64_t through) {
  for (auto* sql : {fill_words_sql, fill_cjk_sql, fill_trigram_sql}) {
    auto stmt = db.prepare(sql);
    if (!stmt)
      return std::move(stmt.error());
    statement_scope s{**stmt};
    s->bind(1, after);
    s->bind(2, through);
    if (auto rc = s->step(); rc != SQLITE_DONE)
      return db.failure(rc, "index rows up to " + std::to_string(through));
  }
  return {};
}

// Indexes rows above `from` within `plan` (see index_pending); leaves the
// transaction open for the caller to advance the watermark and commit.
caf::expected<index_progress> fill_rows(db_connection& db, int64_t from,
                                        const index_tick_plan& plan,
                                        const std::function<bool()>& should_yield) {
  index_progress out;
  out.watermark = from;
  out.next_run = plan.run;
  int64_t chunk_last = from, chunk_n = 0, chunk_b = 0;
  // Indexes the pending run; true when the caller asked to yield after it.
  auto flush_chunk = [&]() -> caf::expected<bool> {
    if (chunk_n == 0)
      return false;
    if (auto err = index_range(db, out.watermark, chunk_last))
      return err;
    out.rows += chunk_n;
    out.bytes += chunk_b;
    out.watermark = chunk_last;
    chunk_n = 0;
    chunk_b = 0;
    if (should_yield && should_yield()) {
      out.waited = true;
      return true;
    }
    out.next_run = next_index_run(out.next_run, plan.max_run);
    return false;
  };
  auto finish = [&](index_stop stop) -> caf::expected<index_progress> {
    auto flushed = flush_chunk();
    if (!flushed)
      return std::move(flushed.error());
    out.stop = stop;
    return out;
  };
  // Stepped lazily, interleaved with the inserts (other tables of the same
  // connection), so a tick that yields early reads no further.
  auto stmt = db.prepare(batch_sizes_sql);
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, from);
  s->bind(2, plan.max_rows);
  int64_t seen = 0;
  for (;;) {
    auto rc = s->step();
    if (rc == SQLITE_DONE)
      return finish(seen < plan.max_rows ? index_stop::caught_up : index_stop::budget);
    if (rc != SQLITE_ROW)
      return db.failure(rc, "read index batch");
    ++seen;
    auto id = s->column_int(0);
    auto bytes = s->column_int(1);
    auto taken = out.rows + chunk_n;
    if (taken > 0 && out.bytes + chunk_b + bytes > plan.max_bytes)
      return finish(index_stop::budget);
    if (!may_index_row(plan, id, bytes)) {
      out.deferred_id = id;
      return finish(index_stop::large_row_due);
    }
    if (chunk_n > 0 && (chunk_n >= out.next_run.rows || chunk_b + bytes > out.next_run.bytes)) {
      auto yield = flush_chunk();
      if (!yield)
        return std::move(yield.error());
      if (*yield) {
        out.stop = index_stop::yielded;
        return out;
      }
    }
    chunk_last = id;
    ++chunk_n;
    chunk_b += bytes;
  }
}

} // namespace

caf::expected<int64_t> fts_watermark(db_connection& db) {
  return scalar_query(db, watermark_sql, "read index watermark");
}

caf::expected<int64_t> fts_backlog(db_connection& db) {
  return scalar_query(db, backlog_sql, "count unindexed messages");
}

caf::expected<index_progress> index_pending(db_connection& db, const index_tick_plan& plan,
                                            const std::function<bool()>& should_yield) {
  assert(db.mode() == open_mode::writer);
  assert(!db.in_transaction());
  assert(plan.max_rows >= 1 && plan.max_bytes >= 1);
  write_transaction txn{db};
  if (auto err = txn.begin())
    return err;
  auto from = fts_watermark(db);
  if (!from)
    return std::move(from.error());
  auto done = fill_rows(db, *from, plan, should_yield);
  if (!done)
    return done;
  if (done->rows == 0)
    return done; // nothing indexed; the transaction rolls back empty
  if (auto err = advance_watermark(db, done->watermark))
    return err;
  if (auto err = txn.commit())
    return err;
  return done;
}

caf::expected<int64_t> index_pending(db_connection& db, int64_t max_rows, int64_t max_bytes) {
  assert(max_rows >= 1 && max_bytes >= 1);
  index_tick_plan plan;
  plan.max_rows = max_rows;
  plan.max_bytes = max_bytes;
  plan.large_row_bytes = max_bytes;
  plan.large_rows_through = std::numeric_limits<int64_t>::max();
  plan.run = plan.max_run = {max_rows, max_bytes}; // nothing to yield to: one run per batch
  auto done = index_pending(db, plan);
  if (!done)
    return std::move(done.error());
  return done->rows;
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
