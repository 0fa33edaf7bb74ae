// Two ways of filling the recall indexes; see index_ways.hpp.
#include "apps/mneme-bench/index_ways.hpp"

#include <filesystem>
#include <string>

#include <sqlite3.h>

#include "apps/mneme-bench/bench_checkpointer.hpp"
#include "messages/mneme_types.hpp"
#include "store/sqlite/db_connection.hpp"
#include "store/sqlite/fts_indexer.hpp"

namespace mneme::bench {

namespace {

// REQUIRES: `sql` has static storage duration (db_connection::prepare).
caf::expected<int64_t> count(db_connection& db, const char* sql) {
  auto stmt = db.prepare(sql);
  if (!stmt)
    return std::move(stmt.error());
  statement_scope s{**stmt};
  auto rc = s->step();
  if (rc != SQLITE_ROW)
    return db.failure(rc, sql);
  return s->column_int(0);
}

} // namespace

void remove_db_files(const std::string& path) {
  for (auto* suffix : {"", "-wal", "-shm", ".lock"}) {
    std::error_code ignored; // a file that is not there, or cannot go, stays
    std::filesystem::remove(path + suffix, ignored);
  }
}

caf::expected<int64_t> fill_indexes_by_ticks(db_connection& db,
                                             const std::function<void()>& after_tick,
                                             index_thread_seconds* by_index) {
  int64_t ticks = 0;
  auto last = thread_cpu_seconds();
  auto rows = index_all_pending(db, &ticks, [&](const index_progress& tick) {
    if (by_index)
      (*by_index)[static_cast<std::size_t>(tick.index)] += thread_cpu_seconds() - last;
    if (after_tick)
      after_tick();
    last = thread_cpu_seconds();
  });
  if (!rows)
    return std::move(rows.error());
  return ticks;
}

caf::error fill_indexes_in_bulk(db_connection& db, const std::function<void()>& after_commit,
                                index_thread_seconds* by_index) {
  static constexpr const char* bulk_sql[fts_index_count] = {
    "BEGIN IMMEDIATE;"
    "INSERT INTO fts_words(rowid, content) SELECT id, content FROM messages"
    " WHERE id > (SELECT words_through FROM fts_state);"
    "UPDATE fts_state SET words_through = (SELECT coalesce(max(id), 0) FROM messages);"
    "UPDATE fts_state SET indexed_through = min(words_through, cjk_through, trigram_through);"
    "COMMIT",
    "BEGIN IMMEDIATE;"
    "INSERT INTO fts_cjk(rowid, content) SELECT id, content FROM messages"
    " WHERE id > (SELECT cjk_through FROM fts_state);"
    "UPDATE fts_state SET cjk_through = (SELECT coalesce(max(id), 0) FROM messages);"
    "UPDATE fts_state SET indexed_through = min(words_through, cjk_through, trigram_through);"
    "COMMIT",
    "BEGIN IMMEDIATE;"
    "INSERT INTO fts_trigram(rowid, content) SELECT id, content FROM messages"
    " WHERE id > (SELECT trigram_through FROM fts_state);"
    "UPDATE fts_state SET trigram_through = (SELECT coalesce(max(id), 0) FROM messages);"
    "UPDATE fts_state SET indexed_through = min(words_through, cjk_through, trigram_through);"
    "COMMIT",
  };
  for (std::size_t i = 0; i < fts_index_count; ++i) {
    auto t0 = thread_cpu_seconds();
    if (auto err = db.exec(bulk_sql[i], "fill an index in one transaction")) {
      if (db.in_transaction())
        db.exec("ROLLBACK", "roll back a failed bulk fill");
      return err;
    }
    if (by_index)
      (*by_index)[i] += thread_cpu_seconds() - t0;
    if (after_commit)
      after_commit();
  }
  return {};
}

caf::expected<int64_t> check_all_indexed(db_connection& db) {
  auto rows = count(db, "SELECT count(*) FROM messages");
  auto last = count(db, "SELECT coalesce(max(id), 0) FROM messages");
  auto lowest = count(db, "SELECT min(indexed_through, words_through, cjk_through, trigram_through)"
                          " FROM fts_state");
  if (!rows || !last || !lowest)
    return caf::make_error(errc::internal, "could not read the index state");
  if (*lowest != *last)
    return caf::make_error(errc::internal, "a watermark (" + std::to_string(*lowest)
                                             + ") is below the last message " + std::to_string(*last));
  for (auto* sql : {"SELECT count(*) FROM fts_words_docsize", "SELECT count(*) FROM fts_cjk_docsize",
                    "SELECT count(*) FROM fts_trigram_docsize"}) {
    auto docs = count(db, sql);
    if (!docs || *docs != *rows)
      return caf::make_error(errc::internal, std::string{"not every message is indexed: "} + sql);
  }
  return *rows;
}

} // namespace mneme::bench
