// Two ways of filling the recall indexes; see index_ways.hpp.
#include "apps/mneme-bench/index_ways.hpp"

#include <filesystem>
#include <string>

#include <sqlite3.h>

#include "messages/mneme_types.hpp"
#include "store/db_connection.hpp"
#include "store/fts_indexer.hpp"

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
                                             const std::function<void()>& after_tick) {
  int64_t ticks = 0;
  if (auto rows = index_all_pending(db, &ticks, after_tick); !rows)
    return std::move(rows.error());
  return ticks;
}

caf::error fill_indexes_in_bulk(db_connection& db) {
  return db.exec("BEGIN IMMEDIATE;"
                 "INSERT INTO fts_words(rowid, content) SELECT id, content FROM messages"
                 " WHERE id > (SELECT indexed_through FROM fts_state);"
                 "INSERT INTO fts_cjk(rowid, content) SELECT id, content FROM messages"
                 " WHERE id > (SELECT indexed_through FROM fts_state);"
                 "INSERT INTO fts_trigram(rowid, content) SELECT id, content FROM messages"
                 " WHERE id > (SELECT indexed_through FROM fts_state);"
                 "UPDATE fts_state SET indexed_through = (SELECT max(id) FROM messages);"
                 "COMMIT",
                 "fill the indexes in one transaction");
}

caf::expected<int64_t> check_all_indexed(db_connection& db) {
  auto rows = count(db, "SELECT count(*) FROM messages");
  auto last = count(db, "SELECT coalesce(max(id), 0) FROM messages");
  auto mark = count(db, "SELECT indexed_through FROM fts_state");
  if (!rows || !last || !mark)
    return caf::make_error(errc::internal, "could not read the index state");
  if (*mark != *last)
    return caf::make_error(errc::internal, "the watermark " + std::to_string(*mark)
                                             + " is below the last message " + std::to_string(*last));
  for (auto* sql : {"SELECT count(*) FROM fts_words_docsize", "SELECT count(*) FROM fts_cjk_docsize",
                    "SELECT count(*) FROM fts_trigram_docsize"}) {
    auto docs = count(db, sql);
    if (!docs || *docs != *rows)
      return caf::make_error(errc::internal, std::string{"not every message is indexed: "} + sql);
  }
  return *rows;
}

} // namespace mneme::bench
