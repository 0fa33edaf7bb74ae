// A database as an older binary left it, for the migration tests (response_records_test,
// idempotent_rows_store_test, key_namespace_migration_test): the schema migrations up to
// a version applied and nothing later, then the rows the test writes in that schema;
// opening it with the store then migrates it. Header-only; the test thread.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <boost/test/unit_test.hpp>
#include <pqxx/pqxx>
#include <sqlite3.h>

#include "store/pg/pg_schema.hpp"
#include "store/sqlite/fts_tokenizers.hpp"
#include "store/sqlite/migrations.hpp"
#include "tests/store_backends.hpp"

namespace mneme::test {

using sqlite_handle = std::unique_ptr<sqlite3, int (*)(sqlite3*)>;

// `sql` run on `db`; a failure ends the test with SQLite's message.
inline void sqlite_exec_required(sqlite3* db, const std::string& sql) {
  BOOST_REQUIRE_MESSAGE(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK,
                        sqlite3_errmsg(db));
}

// The SQLite file `path` at schema `version` (PRAGMA user_version set), open for the
// test's rows; closed when the handle goes.
inline sqlite_handle sqlite_at_version(const std::string& path, int version) {
  sqlite3* raw = nullptr;
  BOOST_REQUIRE(sqlite3_open(path.c_str(), &raw) == SQLITE_OK);
  sqlite_handle db{raw, sqlite3_close};
  BOOST_REQUIRE(register_fts_tokenizers(raw) == SQLITE_OK);
  for (const auto& m : schema_migrations())
    if (m.version <= version)
      sqlite_exec_required(raw, m.sql);
  sqlite_exec_required(raw, "PRAGMA user_version = " + std::to_string(version));
  return db;
}

// The PostgreSQL schema of `url` at schema `version` (pg_apply_migrations up to it),
// then `rows(w)` in one transaction, committed.
inline void write_pg_at_version(const std::string& url, int version,
                                const std::function<void(pqxx::work&)>& rows) {
  pqxx::connection c{url};
  auto err = pg_apply_migrations(c, version);
  BOOST_REQUIRE_MESSAGE(!err, "migrating to " << version << " failed");
  pqxx::work w{c};
  rows(w);
  w.commit();
}

// Whether `store` is at this binary's latest schema version.
inline bool at_latest_schema(const testing::test_store& store, store_backend backend) {
  if (backend == store_backend::sqlite)
    return testing::store_scalar(store, "PRAGMA user_version") == latest_schema_version();
  return testing::store_scalar(store, "SELECT max(version) FROM mneme_schema_versions")
         == pg_latest_schema_version();
}

} // namespace mneme::test
