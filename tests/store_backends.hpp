// The store backends a shared store test runs against (issue 26: one parameterised
// suite, not a copy per backend). A data-driven case takes a store_backend from
// all_store_backends() (or sqlite_only() for an operation PostgreSQL does not have
// yet) and opens its store with open_test_store(); the backend prints as its name
// in the test log. PostgreSQL stores live in a fresh schema of the program's
// throw-away cluster (testing/pg_test_cluster.hpp); SQLite stores in a file of `dir`.
// Header-only; tests/*_test.cpp include it.
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <pqxx/pqxx>
#include <sqlite3.h>

#include "store/message_store.hpp"
#include "store/pg/pg_store.hpp"
#include "store/recall_sources.hpp"
#include "store/sqlite/sqlite_store.hpp"
#include "store/store_maintenance.hpp"
#include "testing/pg_test_cluster.hpp"
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
  params.backend = b;
  if (b == store_backend::sqlite)
    params.path = dir.file("t.db");
  else
    params.url = pg_test_cluster::shared().fresh_url();
}

// A store a test opened: the interface the product uses, and the backend's own class
// for the assertions that read that backend's tables (opened as that class, never
// found by a downcast).
class test_store {
public:
  test_store() = default;
  explicit test_store(std::unique_ptr<sqlite_store> s) : sqlite_(s.get()), store_(std::move(s)) {}
  explicit test_store(std::unique_ptr<pg_store> s) : pg_(s.get()), store_(std::move(s)) {}

  message_store* operator->() const { return store_.get(); }
  message_store& operator*() const { return *store_; }
  explicit operator bool() const { return store_ != nullptr; }
  void reset() { *this = test_store{}; }

  // The SQLite store (null on PostgreSQL) and the PostgreSQL store (null on SQLite).
  sqlite_store* sqlite() const { return sqlite_; }
  pg_store* pg() const { return pg_; }

private:
  sqlite_store* sqlite_ = nullptr;
  pg_store* pg_ = nullptr;
  std::unique_ptr<message_store> store_;
};

inline caf::expected<test_store> open_test_store(const store_params& params) {
  if (params.backend == store_backend::postgres) {
    auto s = pg_store::open(params);
    if (!s)
      return std::move(s.error());
    return test_store{std::move(*s)};
  }
  auto s = sqlite_store::open(params);
  if (!s)
    return std::move(s.error());
  return test_store{std::move(*s)};
}

// A recall reader of the store at `params` (its own connection, as the recall pool's).
inline caf::expected<std::unique_ptr<recall_source>> open_test_recall(const store_params& params) {
  return open_recall_source(params);
}

// What the storage actor does when idle before a search may use the indexes, on a
// backend that indexes behind its appends: index every committed row.
inline void index_for_recall(message_store& store) {
  if (auto* m = store.maintenance()) {
    auto n = m->index_all();
    if (!n)
      throw std::runtime_error("index_for_recall: " + err_of(n));
  }
}

// One integer from `sql` (portable SQL) on the store's own connection.
inline int64_t store_scalar(const test_store& store, const std::string& sql) {
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
  pqxx::nontransaction t{store.pg()->connection()};
  return t.exec1(sql)[0].as<int64_t>();
}

// Whether `sql` succeeds on the store's own connection (a refused statement changes
// nothing).
inline bool store_exec_ok(const test_store& store, const std::string& sql) {
  if (auto* sq = store.sqlite())
    return sqlite3_exec(sq->connection().native_handle(), sql.c_str(), nullptr, nullptr,
                        nullptr) == SQLITE_OK;
  try {
    pqxx::work t{store.pg()->connection()};
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
inline std::function<int64_t()> watch_message_rewrites(const test_store& store) {
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
