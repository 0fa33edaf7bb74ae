// Deferred recall indexing on PostgreSQL; see pg_indexer.hpp.
#include "store/pg/pg_indexer.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "messages/errc.hpp"
#include "store/pg/pg_rows.hpp"
#include "store/pg/pg_search_columns.hpp"
#include "store/pg/pg_store.hpp"

namespace mneme {

namespace {

// Appends `value` to a PostgreSQL array literal as one quoted element.
// REQUIRES: value holds no NUL (recall columns never do).
void add_array_element(std::string& array, const std::string& value) {
  if (array.size() > 1)
    array += ',';
  array += '"';
  for (char c : value) {
    if (c == '"' || c == '\\')
      array += '\\';
    array += c;
  }
  array += '"';
}

} // namespace

pg_index_fill pg_fill_recall_columns(pqxx::transaction_base& t, int64_t max_rows,
                                     int64_t max_bytes, int64_t through,
                                     const std::function<bool()>& should_yield) {
  // Every statement below reads rows by index: the lowest unindexed rows in id order
  // from messages_unindexed (stopping after max_rows), then those rows by key. Without
  // these settings the planner, whose statistics lag a table that grows by thousands
  // of unindexed rows a second, read and sorted the whole backlog (content included,
  // spilled to disk) and scanned it again for the UPDATE, in every batch: a batch cost
  // in proportion to the backlog, and an append on this connection waited behind it.
  // No JIT: the disabled paths' penalty costs pass jit_above_cost, and compiling the
  // watermark's UPDATE took 60-180 ms for a statement that runs in microseconds.
  t.exec0("SET LOCAL jit = off; SET LOCAL enable_bitmapscan = off;"
          " SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off");
  auto rows = t.exec_params("SELECT id, content FROM messages WHERE search_text IS NULL"
                            " ORDER BY id LIMIT $1 FOR NO KEY UPDATE SKIP LOCKED",
                            std::max<int64_t>(1, max_rows));
  pg_index_fill out;
  std::string ids = "{";
  std::string words = "{";
  std::string texts = "{";
  std::string unicode61 = "{";
  bool budget = false;
  for (const auto& r : rows) {
    auto id = r[0].as<int64_t>();
    if (id > through) { // may not go yet: it and the rows behind it wait
      out.deferred_id = id;
      break;
    }
    auto content = pg::text_of(r[1]);
    auto size = static_cast<int64_t>(content.size());
    if (out.rows > 0 && out.bytes + size > max_bytes) {
      budget = true;
      break;
    }
    if (out.rows > 0)
      ids += ',';
    ids += std::to_string(id);
    add_array_element(words, pg_tsvector_literal(content));
    add_array_element(texts, pg_search_text(content));
    add_array_element(unicode61, pg_unicode61_literal(content));
    ++out.rows;
    out.bytes += size;
    if (should_yield && should_yield()) {
      out.yielded = static_cast<std::size_t>(out.rows) < rows.size()
                    || static_cast<int64_t>(rows.size()) >= max_rows;
      break;
    }
  }
  out.caught_up = !budget && !out.yielded && out.deferred_id == 0
                  && static_cast<int64_t>(rows.size()) < max_rows;
  // By primary key alone: the rows are this transaction's, locked above (FOR NO KEY
  // UPDATE blocks every other writer of them), so they are still unindexed; a
  // `search_text IS NULL` here would again let the planner walk the whole backlog.
  if (out.rows > 0)
    t.exec_params("UPDATE messages m SET search_words = u.w::tsvector, search_text = u.t,"
                  " search_unicode61 = u.u::tsvector"
                  " FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[]) AS u(id, w, t, u)"
                  " WHERE m.id = u.id",
                  ids + "}", words + "}", texts + "}", unicode61 + "}");
  // Below the lowest row still unindexed in this snapshot (this batch's rows are set
  // in it), else the highest id.
  out.indexed_through =
    t.exec("UPDATE recall_index_state SET indexed_through = greatest(indexed_through,"
           " coalesce((SELECT min(id) - 1 FROM messages WHERE search_text IS NULL),"
           "          (SELECT max(id) FROM messages), 0))"
           " RETURNING indexed_through")[0][0]
      .as<int64_t>();
  return out;
}

int64_t pg_unindexed_rows(pqxx::transaction_base& t) {
  return t.exec("SELECT count(*) FROM messages WHERE search_text IS NULL")[0][0].as<int64_t>();
}

int64_t pg_indexed_through(pqxx::transaction_base& t) {
  return t.exec("SELECT indexed_through FROM recall_index_state")[0][0].as<int64_t>();
}

bool pg_maintenance::in_transaction() const {
  return store_.group_ != nullptr;
}

caf::expected<fts_index_figures> pg_maintenance::index_backlogs() {
  return pg::guarded_once("read the recall backlog", [&]() -> caf::expected<fts_index_figures> {
    pqxx::read_transaction t{*store_.conn_};
    auto n = pg_unindexed_rows(t);
    t.commit();
    return fts_index_figures{n, n, n};
  });
}

caf::expected<pg_index_fill> pg_maintenance::fill(int64_t max_rows, int64_t max_bytes,
                                                  int64_t through,
                                                  const std::function<bool()>& should_yield) {
  // One attempt: a lost connection fails the batch (the storage actor retries it
  // later; the next write reconnects) rather than holding the writer in reconnect waits.
  return pg::guarded_once("index recall columns", [&]() -> caf::expected<pg_index_fill> {
    pqxx::work w{*store_.conn_};
    // Outside node mode only the writer-lock holder writes (pg_store.hpp).
    if (store_.node_id_.empty())
      if (auto err = store_.keep_writer_lock(w))
        return err;
    // The columns derive from rows already durable: a batch lost in a crash is filled
    // again (columns and watermark roll back together), so its COMMIT need not wait for
    // the disk, and an append queued behind it waits less.
    w.exec0("SET LOCAL synchronous_commit = off");
    auto done = pg_fill_recall_columns(w, max_rows, max_bytes, through, should_yield);
    w.commit();
    return done;
  });
}

caf::expected<index_progress> pg_maintenance::index_tick(
  const index_tick_plan& plan, const std::function<bool()>& should_yield) {
  const bool busy = plan.large_rows_through != std::numeric_limits<int64_t>::max();
  auto rows = std::clamp<int64_t>(std::min(plan.run.rows, plan.max_rows), 1,
                                  busy ? pg_index_busy_batch_rows : pg_index_batch_rows);
  auto bytes = std::clamp<int64_t>(std::min(plan.run.bytes, plan.max_bytes), 1,
                                   busy ? pg_index_busy_batch_bytes : pg_index_batch_bytes);
  // Every row counts as large (policies/index_pacing): filling its columns costs the
  // server more than its append did, so while appends keep coming only rows committed
  // large_row_max_wait_ms ago go; all go once the writer is quiet.
  auto done = fill(rows, bytes, plan.large_rows_through, should_yield);
  if (!done)
    return std::move(done.error());
  index_progress p;
  p.index = fts_index::words;
  p.rows = done->rows;
  p.bytes = done->bytes;
  p.index_watermark = done->indexed_through;
  p.watermark = done->indexed_through;
  p.stop = done->caught_up      ? index_stop::caught_up
           : done->yielded      ? index_stop::yielded
           : done->deferred_id  ? index_stop::large_row_due
                                : index_stop::budget;
  p.deferred_id = done->deferred_id;
  p.all_caught_up = done->caught_up;
  p.waited = done->yielded;
  p.next_run = done->yielded ? plan.run : next_index_run(plan.run, plan.max_run);
  return p;
}

caf::expected<int64_t> pg_maintenance::index_all() {
  int64_t total = 0;
  for (;;) {
    auto done = fill(pg_index_batch_rows, pg_index_batch_bytes,
                     std::numeric_limits<int64_t>::max(), {});
    if (!done)
      return std::move(done.error());
    total += done->rows;
    if (done->caught_up || done->rows == 0)
      break;
  }
  if (total >= pg_analyze_after_rows)
    (void)pg::guarded_once("analyze after indexing", [&]() -> caf::expected<int64_t> {
      pqxx::work w{*store_.conn_};
      w.exec0("ANALYZE messages, message_state, sessions");
      w.commit();
      return total;
    });
  return total;
}

caf::expected<std::unique_ptr<log_checkpointer>> pg_maintenance::open_log_checkpointer() {
  return caf::make_error(errc::storage_failed,
                         "postgres: the server copies its own log back; no checkpointer");
}

} // namespace mneme
