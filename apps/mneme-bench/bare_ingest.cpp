// The raw libraries' ingest into a bare table; see bare_ingest.hpp.
#include "apps/mneme-bench/bare_ingest.hpp"

#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>

#include <pqxx/pqxx>
#include <sqlite3.h>

#include "apps/mneme-bench/storage_ingest.hpp"
#include "store/sqlite/db_connection.hpp"

namespace mneme::bench {
namespace {

// Row k of the run: its session, role and body, the same on both libraries.
struct bare_row {
  std::string session_id;
  const char* role;
  const std::string* body;
  int64_t timestamp_ms;
};

bare_row row_of(int64_t k, const std::vector<std::string>& bodies) {
  constexpr int64_t sessions = 1000;
  const auto seq = k / sessions;
  return {"s" + std::to_string(k % sessions), seq % 2 == 0 ? "user" : "assistant",
          &bodies[static_cast<size_t>(k) % bodies.size()], 1700000000000 + seq};
}

void sqlite_exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string what = err != nullptr ? err : "?";
    sqlite3_free(err);
    throw std::runtime_error{"bare ingest: SQLite: " + what + " in " + sql};
  }
}

} // namespace

double sqlite_bare_ingest(const std::string& path, int64_t rows,
                          const std::vector<std::string>& bodies, int64_t batch) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK)
    throw std::runtime_error{"bare ingest: cannot open " + path};
  sqlite_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA cache_size=-"
                    + std::to_string(writer_cache_kib));
  sqlite_exec(db, "CREATE TABLE bare(id INTEGER PRIMARY KEY, session_id TEXT NOT NULL,"
                  " role TEXT NOT NULL, content BLOB NOT NULL, timestamp_ms INTEGER NOT NULL,"
                  " token_estimate INTEGER NOT NULL)");
  sqlite3_stmt* ins = nullptr;
  sqlite3_prepare_v2(db,
                     "INSERT INTO bare(session_id, role, content, timestamp_ms, token_estimate)"
                     " VALUES (?1, ?2, ?3, ?4, ?5)",
                     -1, &ins, nullptr);
  const auto t0 = steady::now();
  for (int64_t k = 0; k < rows; ++k) {
    if (k % batch == 0)
      sqlite_exec(db, "BEGIN IMMEDIATE");
    auto r = row_of(k, bodies);
    sqlite3_bind_text(ins, 1, r.session_id.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(ins, 2, r.role, -1, SQLITE_STATIC);
    sqlite3_bind_blob(ins, 3, r.body->data(), static_cast<int>(r.body->size()), SQLITE_STATIC);
    sqlite3_bind_int64(ins, 4, r.timestamp_ms);
    sqlite3_bind_int64(ins, 5, static_cast<int64_t>(r.body->size() / 4));
    if (sqlite3_step(ins) != SQLITE_DONE)
      throw std::runtime_error{std::string{"bare ingest: SQLite insert: "} + sqlite3_errmsg(db)};
    sqlite3_reset(ins);
    if ((k + 1) % batch == 0 || k + 1 == rows)
      sqlite_exec(db, "COMMIT");
  }
  const auto elapsed = ms_since(t0);
  sqlite3_finalize(ins);
  sqlite3_close(db);
  return static_cast<double>(rows) / (elapsed / 1000.0);
}

namespace {

// A connection to `url` holding an empty bare table and its prepared insert.
std::unique_ptr<pqxx::connection> pg_bare_table(const std::string& url) {
  auto c = std::make_unique<pqxx::connection>(url);
  c->set_variable("synchronous_commit", "on");
  try { // as mneme's store sets it, where the server has lz4
    c->set_variable("default_toast_compression", "lz4");
  } catch (const pqxx::sql_error&) {
  }
  {
    pqxx::nontransaction t{*c};
    t.exec0("CREATE TABLE bare(id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
            " session_id text NOT NULL, role text NOT NULL, content bytea NOT NULL,"
            " timestamp_ms bigint NOT NULL, token_estimate bigint NOT NULL)");
  }
  c->prepare("bare_insert",
             "INSERT INTO bare(session_id, role, content, timestamp_ms, token_estimate)"
             " VALUES ($1, $2, $3, $4, $5)");
  return c;
}

void pg_bare_insert(pqxx::work& w, int64_t k, const std::vector<std::string>& bodies) {
  auto r = row_of(k, bodies);
  w.exec_prepared("bare_insert", r.session_id, r.role,
                  pqxx::binarystring{r.body->data(), r.body->size()}, r.timestamp_ms,
                  static_cast<int64_t>(r.body->size() / 4));
}

} // namespace

double pg_bare_ingest(const std::string& url, int64_t rows,
                      const std::vector<std::string>& bodies, int64_t batch) {
  auto c = pg_bare_table(url);
  const auto t0 = steady::now();
  for (int64_t first = 0; first < rows; first += batch) {
    pqxx::work w{*c};
    for (int64_t k = first; k < rows && k < first + batch; ++k)
      pg_bare_insert(w, k, bodies);
    w.commit();
  }
  return static_cast<double>(rows) / (ms_since(t0) / 1000.0);
}

std::vector<double> pg_bare_paced_acks(const std::string& url, int64_t rows,
                                       const std::vector<std::string>& bodies, double rate) {
  auto c = pg_bare_table(url);
  std::vector<double> latencies;
  latencies.reserve(static_cast<size_t>(rows));
  const auto t0 = steady::now();
  auto arrival = [&](int64_t k) {
    return t0 + std::chrono::duration_cast<steady::duration>(
                  std::chrono::duration<double>(static_cast<double>(k) / rate));
  };
  for (int64_t first = 0; first < rows;) {
    auto now = steady::now();
    if (arrival(first) > now) {
      std::this_thread::sleep_until(arrival(first));
      continue;
    }
    int64_t end = first;
    while (end < rows && arrival(end) <= now)
      ++end;
    pqxx::work w{*c};
    for (int64_t k = first; k < end; ++k)
      pg_bare_insert(w, k, bodies);
    w.commit();
    const auto acked = steady::now();
    for (int64_t k = first; k < end; ++k)
      latencies.push_back(std::chrono::duration<double, std::milli>(acked - arrival(k)).count());
    first = end;
  }
  return latencies;
}

} // namespace mneme::bench
