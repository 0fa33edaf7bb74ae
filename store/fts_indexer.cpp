// Batched, crash-safe filling of the recall indexes; see fts_indexer.hpp.
#include "store/fts_indexer.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <limits>
#include <string>
#include <string_view>

#include <sqlite3.h>

#include "policies/wal_checkpoint.hpp"
#include "store/db_connection.hpp"

namespace mneme {

namespace {

constexpr const char* watermark_sql = "SELECT indexed_through FROM fts_state WHERE singleton = 1";

constexpr const char* backlog_sql =
  "SELECT count(*) FROM messages WHERE id > (SELECT indexed_through FROM fts_state)";

// ?1 watermark, ?2 max rows. The pending rows in id order: id, text. The text's
// byte length is taken from the loaded text: a second expression over `content`
// (length(CAST(content AS BLOB))) would load a large text's overflow pages twice.
constexpr const char* pending_rows_sql =
  "SELECT id, content FROM messages WHERE id > ?1 ORDER BY id LIMIT ?2";

// Every index takes one row per statement: a single-row INSERT ... VALUES opens
// no statement savepoint, so FTS5 keeps the row in its in-memory pending list
// with the tick's rows before it and writes them as one segment (at COMMIT, or
// when the list passes FTS5's hashsize, as its own bulk insert does). A
// multi-row INSERT would open a savepoint, at which FTS5 writes its pending
// lists as a segment. The indexer checks for a waiting request after every row.
// ?1 row id, ?2 text.
constexpr const char* add_words_sql = "INSERT INTO fts_words(rowid, content) VALUES (?1, ?2)";
constexpr const char* add_cjk_sql = "INSERT INTO fts_cjk(rowid, content) VALUES (?1, ?2)";
constexpr const char* add_trigram_sql = "INSERT INTO fts_trigram(rowid, content) VALUES (?1, ?2)";

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

// The single-row INSERT of each index, looked up once per tick.
using index_inserts = std::array<statement*, 3>;

caf::expected<index_inserts> prepare_inserts(db_connection& db) {
  index_inserts out{};
  auto* next = out.begin();
  for (auto* sql : {add_words_sql, add_cjk_sql, add_trigram_sql}) {
    auto stmt = db.prepare(sql);
    if (!stmt)
      return std::move(stmt.error());
    *next++ = *stmt;
  }
  return out;
}

// Adds one row to the three indexes.
caf::error index_row(db_connection& db, const index_inserts& inserts, int64_t id,
                     std::string_view text) {
  for (auto* stmt : inserts) {
    statement_scope s{*stmt};
    s->bind(1, id);
    s->bind_unowned(2, text);
    if (auto rc = s->step(); rc != SQLITE_DONE)
      return db.failure(rc, "index row " + std::to_string(id));
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
  // The tick's length: its run, within the tick's bounds.
  auto max_rows = std::max<int64_t>(1, std::min(plan.max_rows, plan.run.rows));
  auto max_bytes = std::max<int64_t>(1, std::min(plan.max_bytes, plan.run.bytes));
  auto done = [&](index_stop stop) {
    out.stop = stop;
    if (!out.waited) // nothing waited behind this tick: the next one may be longer
      out.next_run = next_index_run(plan.run, plan.max_run);
    return out;
  };
  // The log this tick writes: pages the page cache spills mid-transaction
  // (the COMMIT then writes the rest of the dirty pages and FTS5's pending lists).
  auto page_bytes = db.page_bytes();
  if (!page_bytes)
    return std::move(page_bytes.error());
  auto written_at_start = db.pages_written();
  auto inserts = prepare_inserts(db);
  if (!inserts)
    return std::move(inserts.error());
  // Stepped lazily, interleaved with the inserts (other tables of the same
  // connection), so a tick that yields early reads no further.
  auto stmt = db.prepare(pending_rows_sql);
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, from);
  s->bind(2, max_rows);
  for (;;) {
    if (out.waited) // a request waits: end without reading the next row
      return done(index_stop::yielded);
    auto rc = s->step();
    if (rc == SQLITE_DONE)
      return done(out.rows < max_rows ? index_stop::caught_up : index_stop::budget);
    if (rc != SQLITE_ROW)
      return db.failure(rc, "read rows to index");
    auto id = s->column_int(0);
    // No copy: the view stays valid until the next step of `s`, after the row's inserts.
    auto text = s->column_view(1);
    auto bytes = static_cast<int64_t>(text.size());
    if (out.rows > 0 && out.bytes + bytes > max_bytes)
      return done(index_stop::budget);
    if (!may_index_row(plan, id, bytes)) {
      out.deferred_id = id;
      return done(index_stop::large_row_due);
    }
    if (auto err = index_row(db, *inserts, id, text))
      return err;
    ++out.rows;
    out.bytes += bytes;
    out.watermark = id;
    // Asked after every row: a request waits at most one row's indexing and the commit.
    out.waited = should_yield && should_yield();
    if (!out.waited && tick_log_spent(plan, (db.pages_written() - written_at_start) * *page_bytes))
      return done(index_stop::budget);
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

caf::expected<int64_t> index_all_pending(db_connection& db, int64_t* batches,
                                         const std::function<void()>& after_tick) {
  // An idle writer's ticks: every row may go, and each batch also ends at its
  // log budget, so no single transaction's log grows with the index.
  auto plan = plan_index_tick(index_pacing_params{}, 0, -1, {});
  int64_t total = 0;
  int64_t committed = 0;
  for (;;) {
    auto done = index_pending(db, plan);
    if (!done)
      return std::move(done.error());
    if (done->rows == 0)
      break;
    total += done->rows;
    ++committed;
    plan.run = done->next_run;
    if (after_tick)
      after_tick();
  }
  if (batches)
    *batches = committed;
  return total;
}

void checkpoint_between_ticks(db_connection& db) {
  if (!db.take_wal_commit())
    return; // nothing committed since the last look, or a writer SQLite checkpoints
  auto action = plan_wal_checkpoint(wal_checkpoint_params{}, db.wal_pages(), false, false);
  if (action != wal_checkpoint_action::inline_passive)
    return;
  auto done = db.checkpoint_passive();
  if (!done || done->busy)
    db.mark_wal_commit(); // failed, or another checkpoint ran: plan again after the next tick
}

} // namespace mneme
