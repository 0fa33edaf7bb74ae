// The store backends a shared store test runs against (issue 26: one parameterised
// suite, not a copy per backend). A data-driven case takes a store_backend from
// all_store_backends() (or sqlite_only() for an operation PostgreSQL does not have
// yet) and opens its store with open_test_store(); the backend prints as its name
// in the test log. PostgreSQL stores live in a fresh schema of the program's
// throw-away cluster (tests/pg_cluster_fixture.hpp); SQLite stores in a file of `dir`.
// Header-only; tests/*_test.cpp include it.
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <ostream>
#include <string>
#include <vector>

#include <pqxx/pqxx>
#include <sqlite3.h>

#include "store/open_store.hpp"
#include "store/sqlite/fts_indexer.hpp"
#include "store/message_store.hpp"
#include "store/pg/pg_store.hpp"
#include "store/recall_sources.hpp"
#include "store/sqlite/sqlite_store.hpp"
#include "tests/pg_cluster_fixture.hpp"
#include "tests/store_test_util.hpp"

namespace mneme::testing {

using mneme::store_backend; // printed as its name (store/store_backend.hpp)

inline std::vector<store_backend> all_store_backends() {
  return {store_backend::sqlite, store_backend::postgres};
}

inline std::vector<store_backend> sqlite_only() {
  return {store_backend::sqlite};
}

// Fills `params` for `b`: a file in `dir` for SQLite, a fresh schema of the test
// cluster for PostgreSQL (reopening with the same params finds the same rows).
inline void use_backend(store_backend b, store_params& params, const temp_dir& dir) {
  if (b == store_backend::sqlite) {
    params.backend = store_backend::sqlite;
    params.path = dir.file("t.db");
  } else {
    params.backend = store_backend::postgres;
    params.url = pg_test_cluster::shared().fresh_url();
  }
}

inline caf::expected<std::unique_ptr<message_store>> open_test_store(const store_params& params) {
  return open_message_store(params);
}

// A recall reader of the store at `params` (its own connection, as the recall pool's).
inline caf::expected<std::unique_ptr<recall_source>> open_test_recall(const store_params& params) {
  return open_recall_source(params);
}

// What the SQLite storage actor does when idle before a search may use the indexes:
// index every committed row. PostgreSQL indexes in the append transaction.
inline void index_for_recall(message_store& store) {
  if (auto* sq = store.sqlite()) {
    auto n = index_all_pending(sq->connection());
    if (!n)
      throw std::runtime_error("index_for_recall: " + err_of(n));
  }
}

// One integer from `sql` (portable SQL) on the store's own connection.
inline int64_t store_scalar(message_store& store, const std::string& sql) {
  if (auto* sq = store.sqlite()) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(sq->connection().native_handle(), sql.c_str(), -1, &st, nullptr)
        != SQLITE_OK)
      throw std::runtime_error("store_scalar: cannot prepare " + sql);
    if (sqlite3_step(st) != SQLITE_ROW) {
      sqlite3_finalize(st);
      throw std::runtime_error("store_scalar: no row from " + sql);
    }
    auto v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
  }
  auto& pg = dynamic_cast<pg_store&>(store);
  pqxx::nontransaction t{pg.connection()};
  return t.exec1(sql)[0].as<int64_t>();
}

// Whether `sql` succeeds on the store's own connection (a refused statement changes
// nothing).
inline bool store_exec_ok(message_store& store, const std::string& sql) {
  if (auto* sq = store.sqlite())
    return sqlite3_exec(sq->connection().native_handle(), sql.c_str(), nullptr, nullptr,
                        nullptr) == SQLITE_OK;
  auto& pg = dynamic_cast<pg_store&>(store);
  try {
    pqxx::work t{pg.connection()};
    t.exec0(sql);
    t.commit();
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// Watches UPDATEs of message rows from now on; the returned function counts them. On
// SQLite a temporary trigger counts; on PostgreSQL the schema refuses every such
// UPDATE (checked here), so nothing can rewrite a message and the count is 0.
inline std::function<int64_t()> watch_message_rewrites(message_store& store) {
  if (store.sqlite() != nullptr) {
    if (!store_exec_ok(store, "CREATE TEMP TABLE rewrites(n INTEGER);"
                              "INSERT INTO rewrites VALUES (0);"
                              "CREATE TEMP TRIGGER count_rewrites AFTER UPDATE ON main.messages"
                              " BEGIN UPDATE rewrites SET n = n + 1; END;"))
      throw std::runtime_error("watch_message_rewrites: cannot create the trigger");
    return [&store] { return store_scalar(store, "SELECT n FROM temp.rewrites"); };
  }
  if (store_exec_ok(store, "UPDATE messages SET timestamp_ms = timestamp_ms"))
    throw std::runtime_error("watch_message_rewrites: PostgreSQL let a message be rewritten");
  return [] { return int64_t{0}; };
}

} // namespace mneme::testing
