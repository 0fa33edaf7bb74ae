// Batched, crash-safe filling of the recall indexes; see fts_indexer.hpp.
#include "store/sqlite/fts_indexer.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include <sqlite3.h>

#include "policies/index_pacing.hpp"
#include "policies/wal_checkpoint.hpp"
#include "store/sqlite/db_connection.hpp"

namespace mneme {

namespace {

constexpr const char* watermark_sql = "SELECT indexed_through FROM fts_state WHERE singleton = 1";

constexpr const char* index_watermarks_sql =
  "SELECT words_through, cjk_through, trigram_through FROM fts_state WHERE singleton = 1";

constexpr const char* backlog_sql =
  "SELECT count(*) FROM messages WHERE id > (SELECT indexed_through FROM fts_state)";

// ?1 above, ?2 through: the messages in (?1, ?2].
constexpr const char* rows_between_sql = "SELECT count(*) FROM messages WHERE id > ?1 AND id <= ?2";

// ?1 watermark, ?2 max rows. The pending rows in id order: id, text. The text's
// byte length is taken from the loaded text: a second expression over `content`
// (length(CAST(content AS BLOB))) would load a large text's overflow pages twice.
constexpr const char* pending_rows_sql =
  "SELECT id, content FROM messages WHERE id > ?1 ORDER BY id LIMIT ?2";

// What a tick runs on one index, by position (fts_index).
struct index_statements {
  const char* table;
  // One row per statement: a single-row INSERT ... VALUES opens no statement
  // savepoint, so FTS5 keeps the row in its in-memory pending list with the
  // tick's rows before it and writes them as one segment (at COMMIT, or when
  // the list passes FTS5's hashsize, as its own bulk insert does). A multi-row
  // INSERT would open a savepoint, at which FTS5 writes its pending list as a
  // segment. The indexer checks for a waiting request after every row.
  // ?1 row id, ?2 text.
  const char* add;
  // The index's watermark to ?1 and the lowest of the three with it.
  const char* advance;
};

constexpr index_statements index_sql[fts_index_count] = {
  {"fts_words", "INSERT INTO fts_words(rowid, content) VALUES (?1, ?2)",
   "UPDATE fts_state SET words_through = ?1,"
   " indexed_through = min(?1, cjk_through, trigram_through) WHERE singleton = 1"},
  {"fts_cjk", "INSERT INTO fts_cjk(rowid, content) VALUES (?1, ?2)",
   "UPDATE fts_state SET cjk_through = ?1,"
   " indexed_through = min(words_through, ?1, trigram_through) WHERE singleton = 1"},
  {"fts_trigram", "INSERT INTO fts_trigram(rowid, content) VALUES (?1, ?2)",
   "UPDATE fts_state SET trigram_through = ?1,"
   " indexed_through = min(words_through, cjk_through, ?1) WHERE singleton = 1"},
};

const index_statements& statements_of(fts_index index) {
  return index_sql[static_cast<std::size_t>(index)];
}

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

caf::error advance_watermark(db_connection& db, fts_index index, int64_t through) {
  auto stmt = db.prepare(statements_of(index).advance);
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, through);
  auto rc = s->step();
  return rc == SQLITE_DONE ? caf::error{} : db.failure(rc, "advance index watermark");
}

// Adds one row to one index.
caf::error index_row(db_connection& db, statement& insert, int64_t id, std::string_view text) {
  statement_scope s{insert};
  s->bind(1, id);
  s->bind_unowned(2, text);
  if (auto rc = s->step(); rc != SQLITE_DONE)
    return db.failure(rc, "index row " + std::to_string(id));
  return {};
}

caf::expected<int64_t> rows_between(db_connection& db, int64_t above, int64_t through) {
  auto stmt = db.prepare(rows_between_sql);
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  s->bind(1, above);
  s->bind(2, through);
  auto rc = s->step();
  if (rc != SQLITE_ROW)
    return db.failure(rc, "count indexed messages");
  return s->column_int(0);
}

// Indexes rows above `from` into `index` within `plan` (see index_pending);
// leaves the transaction open for the caller to advance the watermark and commit.
caf::expected<index_progress> fill_rows(db_connection& db, fts_index index, int64_t from,
                                        const index_tick_plan& plan,
                                        const std::function<bool()>& should_yield) {
  index_progress out;
  out.index = index;
  out.index_watermark = from;
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
  auto insert = db.prepare(statements_of(index).add);
  if (!insert)
    return std::move(insert.error());
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
    if (auto err = index_row(db, **insert, id, text))
      return err;
    ++out.rows;
    out.bytes += bytes;
    out.index_watermark = id;
    // Asked after every row: a request waits at most one row's indexing and the commit.
    out.waited = should_yield && should_yield();
    if (!out.waited && tick_log_spent(plan, (db.pages_written() - written_at_start) * *page_bytes))
      return done(index_stop::budget);
  }
}

} // namespace

const char* fts_index_table(fts_index index) {
  return statements_of(index).table;
}

caf::expected<int64_t> fts_watermark(db_connection& db) {
  return scalar_query(db, watermark_sql, "read index watermark");
}

caf::expected<fts_index_figures> fts_index_watermarks(db_connection& db) {
  auto stmt = db.prepare(index_watermarks_sql);
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  auto rc = s->step();
  if (rc != SQLITE_ROW)
    return db.failure(rc, "read index watermarks");
  fts_index_figures out{};
  for (std::size_t i = 0; i < fts_index_count; ++i)
    out[i] = s->column_int(static_cast<int>(i));
  return out;
}

caf::expected<int64_t> fts_backlog(db_connection& db) {
  return scalar_query(db, backlog_sql, "count unindexed messages");
}

caf::expected<fts_index_figures> fts_index_backlogs(db_connection& db) {
  auto marks = fts_index_watermarks(db);
  if (!marks)
    return std::move(marks.error());
  // Counted in disjoint ranges from the highest watermark down, so each row
  // above the lowest one is read once, as fts_backlog reads it.
  auto order = index_fill_order(*marks); // lowest first
  fts_index_figures out{};
  int64_t above = 0;
  auto upper = std::numeric_limits<int64_t>::max();
  for (auto k = order.rbegin(); k != order.rend(); ++k) {
    auto mark = (*marks)[static_cast<std::size_t>(*k)];
    auto n = rows_between(db, mark, std::max(mark, upper));
    if (!n)
      return std::move(n.error());
    above += *n;
    out[static_cast<std::size_t>(*k)] = above;
    upper = mark;
  }
  return out;
}

caf::expected<index_progress> index_pending(db_connection& db, const index_tick_plan& plan,
                                            const std::function<bool()>& should_yield) {
  assert(db.mode() == open_mode::writer);
  assert(!db.in_transaction());
  assert(plan.max_rows >= 1 && plan.max_bytes >= 1);
  write_transaction txn{db};
  if (auto err = txn.begin())
    return err;
  auto marks = fts_index_watermarks(db);
  if (!marks)
    return std::move(marks.error());
  std::optional<index_progress> first;   // the first index tried
  std::optional<index_progress> blocked; // the first index that waits for a large row
  std::optional<index_progress> moved;   // the index that took rows (then no other is tried)
  for (auto position : index_fill_order(*marks)) {
    auto index = static_cast<fts_index>(position);
    auto tick = fill_rows(db, index, (*marks)[static_cast<std::size_t>(position)], plan,
                          should_yield);
    if (!tick)
      return tick;
    if (tick->rows > 0) {
      moved = std::move(*tick);
      break;
    }
    // No row: caught up, or waiting for a large row; the next index may still
    // have rows (below that row, or above a watermark it passed before).
    if (!blocked && tick->stop == index_stop::large_row_due)
      blocked = *tick;
    if (!first)
      first = std::move(*tick);
  }
  if (moved) {
    if (auto err = advance_watermark(db, moved->index, moved->index_watermark))
      return err;
    if (auto err = txn.commit())
      return err;
  } // else nothing indexed; the transaction rolls back empty
  // Reported: the index that moved; else the first that waits for a large row
  // (the furthest behind: its row is the oldest, due first); else every index
  // is caught up.
  auto out = moved ? std::move(*moved) : blocked ? std::move(*blocked) : std::move(*first);
  (*marks)[static_cast<std::size_t>(out.index)] = out.index_watermark;
  out.watermark = *std::min_element(marks->begin(), marks->end());
  // The rows the index read ended at its new watermark, and no index is above that.
  out.all_caught_up = out.stop == index_stop::caught_up && !blocked
                      && out.watermark == out.index_watermark;
  // An index that moved past the blocked one's large row and then stopped at
  // another: the blocked row is the older one, due first. One that stopped for
  // another reason reports none, so the caller's next tick tries again.
  if (blocked && out.stop == index_stop::large_row_due)
    out.deferred_id = blocked->deferred_id;
  return out;
}

caf::expected<int64_t> index_pending(db_connection& db, int64_t max_rows, int64_t max_bytes) {
  assert(max_rows >= 1 && max_bytes >= 1);
  index_tick_plan plan;
  plan.max_rows = max_rows;
  plan.max_bytes = max_bytes;
  plan.large_row_bytes = max_bytes;
  plan.large_rows_through = std::numeric_limits<int64_t>::max();
  plan.run = plan.max_run = {max_rows, max_bytes}; // nothing to yield to: one run per tick
  auto before = fts_watermark(db);
  if (!before)
    return std::move(before.error());
  int64_t after = *before;
  for (std::size_t tick = 0; tick < fts_index_count; ++tick) {
    auto done = index_pending(db, plan);
    if (!done)
      return std::move(done.error());
    after = done->watermark;
  }
  return rows_between(db, *before, after);
}

caf::expected<int64_t> index_all_pending(
  db_connection& db, int64_t* ticks,
  const std::function<void(const index_progress&)>& after_tick) {
  // An idle writer's ticks: every row may go, and each tick also ends at its
  // log budget, so no single transaction's log grows with the index.
  auto plan = plan_index_tick(index_pacing_params{}, 0, -1, {});
  auto marks = fts_index_watermarks(db);
  if (!marks)
    return std::move(marks.error());
  // The index furthest behind takes every row above the lowest watermark: its
  // rows are the messages that were missing from at least one index.
  auto furthest_behind = static_cast<fts_index>(index_fill_order(*marks)[0]);
  int64_t committed = 0;
  int64_t missing = 0;
  for (;;) {
    auto done = index_pending(db, plan);
    if (!done)
      return std::move(done.error());
    if (done->rows == 0)
      break; // no index had a row above its watermark: all are caught up
    ++committed;
    if (done->index == furthest_behind)
      missing += done->rows;
    plan.run = done->next_run;
    if (after_tick)
      after_tick(*done);
  }
  if (ticks)
    *ticks = committed;
  return missing;
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
