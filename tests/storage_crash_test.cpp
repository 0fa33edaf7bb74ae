// Crash safety of the single writer, shown rather than assumed: 50 trials of a
// writer process (tests/tools/crash_writer) killed with SIGKILL at a random moment
// during appends and compactions, all on the same database: a SQLite file, and a
// schema of the throw-away PostgreSQL cluster (testing/pg_test_cluster.hpp; the
// server lives on, the client dies). After each kill the database is reopened and
// checked:
//   1. SQLite: PRAGMA integrity_check is "ok";
//   2. every append acknowledged before the kill is present, and no message
//      appears twice (each content carries a unique tag);
//   3. each compaction is all or nothing: a summary "S n=<count>" archived exactly
//      <count> rows, every archived row names an existing summary, and every
//      acknowledged compaction is present;
//   4. no row was deleted: every row seen after an earlier trial is still there
//      with the same content, each has one state row; on SQLite ids are 1..max
//      without holes (a PostgreSQL identity skips the values of rolled-back inserts).
// The kill delay is random (seeded, printed); the verdict does not depend on timing.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <signal.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include <pqxx/pqxx>
#include <sqlite3.h>

#include "testing/pg_test_cluster.hpp"
#include "tests/child_program.hpp"
#include "tests/temp_dir.hpp"

BOOST_AUTO_TEST_SUITE(storage_crash_test)

namespace {

constexpr int trials = 50;

struct child_output {
  std::vector<int64_t> acked_appends;
  std::vector<std::pair<int64_t, int64_t>> acked_compactions; // summary id, rows
  bool ready = false;
};

child_output parse(const std::string& text) {
  child_output out;
  std::istringstream in{text};
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof() && !text.empty() && text.back() != '\n')
      break; // a torn last line was never fully acknowledged
    std::istringstream ls{line};
    std::string kind;
    ls >> kind;
    if (kind == "ready") {
      out.ready = true;
    } else if (kind == "A") {
      int64_t id = 0;
      ls >> id;
      out.acked_appends.push_back(id);
    } else if (kind == "C") {
      int64_t id = 0;
      int64_t n = 0;
      ls >> id >> n;
      out.acked_compactions.emplace_back(id, n);
    }
  }
  return out;
}

// Runs one writer (MNEME_BINARY_DIR/crash_writer) and kills it `delay` after it reported
// ready.
child_output run_and_kill(const std::string& db, int run, unsigned seed,
                          std::chrono::milliseconds delay) {
  mneme::testing::child_program writer;
  BOOST_REQUIRE(writer.start("crash_writer", {db, std::to_string(run), std::to_string(seed)}));
  auto out = writer.read_until("ready\n", std::chrono::seconds(20));
  out += writer.read_for(delay);
  BOOST_TEST(writer.stop(SIGKILL) == 128 + SIGKILL);
  out += writer.read_to_end(std::chrono::seconds(30)); // everything written before the kill
  return parse(out);
}

// The checks' view of the database: one integer from a query (with $1 bound when
// `bind` is not 0), every message row, and the backend's own SQL where dialects differ.
class crash_check_db {
public:
  virtual ~crash_check_db() = default;
  virtual int64_t scalar(const std::string& sql, int64_t bind = 0) = 0;
  // Calls f(id, content) for every message row.
  virtual void each_row(const std::function<void(int64_t, const std::string&)>& f) = 0;
  // A database that checks its own pages: "ok" when they are sound.
  virtual std::string integrity() = 0;
  // Tags (the text up to the first space) of non-summary rows stored twice.
  virtual const char* duplicate_tags_sql() const = 0;
  // Summaries whose "S n=<count>" differs from the rows they archived.
  virtual const char* partial_compactions_sql() const = 0;
  // Whether ids are dense (1..max without holes).
  virtual bool dense_ids() const = 0;
};

class sqlite_crash_db final : public crash_check_db {
public:
  sqlite3* db = nullptr;
  explicit sqlite_crash_db(const std::string& path) {
    BOOST_REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
  }
  ~sqlite_crash_db() override { sqlite3_close(db); }
  int64_t scalar(const std::string& sql, int64_t bind = 0) override {
    sqlite3_stmt* st = nullptr;
    BOOST_REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK);
    if (bind != 0)
      sqlite3_bind_int64(st, 1, bind);
    BOOST_REQUIRE(sqlite3_step(st) == SQLITE_ROW);
    auto v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
  }
  std::string integrity() override {
    sqlite3_stmt* st = nullptr;
    BOOST_REQUIRE(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, nullptr)
                  == SQLITE_OK);
    BOOST_REQUIRE(sqlite3_step(st) == SQLITE_ROW);
    std::string v = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return v;
  }
  void each_row(const std::function<void(int64_t, const std::string&)>& f) override {
    sqlite3_stmt* st = nullptr;
    BOOST_REQUIRE(sqlite3_prepare_v2(db, "SELECT id, content FROM messages", -1, &st, nullptr)
                  == SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW)
      f(sqlite3_column_int64(st, 0),
        std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 0 + 1)),
                    static_cast<size_t>(sqlite3_column_bytes(st, 1))));
    sqlite3_finalize(st);
  }
  const char* duplicate_tags_sql() const override {
    return "SELECT count(*) FROM (SELECT substr(content, 1, instr(content, ' '))"
           " AS tag FROM messages WHERE is_summary = 0 GROUP BY tag HAVING count(*) > 1)";
  }
  const char* partial_compactions_sql() const override {
    return "SELECT count(*) FROM messages m WHERE m.is_summary = 1 AND"
           " (SELECT count(*) FROM message_state s WHERE s.archived_by = m.id)"
           " != CAST(substr(m.content, 5) AS INTEGER)";
  }
  bool dense_ids() const override { return true; }
};

// PostgreSQL: message text is bytea (store/pg/pg_schema.cpp).
class pg_crash_db final : public crash_check_db {
public:
  explicit pg_crash_db(const std::string& url) : conn_(url) {}
  int64_t scalar(const std::string& sql, int64_t bind = 0) override {
    pqxx::nontransaction t{conn_};
    return (bind != 0 ? t.exec_params1(sql, bind) : t.exec1(sql))[0].as<int64_t>();
  }
  void each_row(const std::function<void(int64_t, const std::string&)>& f) override {
    pqxx::nontransaction t{conn_};
    for (const auto& r : t.exec("SELECT id, content FROM messages"))
      f(r[0].as<int64_t>(), pqxx::binarystring{r[1]}.str());
  }
  std::string integrity() override { return "ok"; } // the server's own business
  const char* duplicate_tags_sql() const override {
    return "SELECT count(*) FROM (SELECT substring(content from 1 for"
           " position('\\x20'::bytea in content)) AS tag FROM messages WHERE is_summary = 0"
           " GROUP BY tag HAVING count(*) > 1) d";
  }
  const char* partial_compactions_sql() const override {
    return "SELECT count(*) FROM messages m WHERE m.is_summary = 1 AND"
           " (SELECT count(*) FROM message_state s WHERE s.archived_by = m.id)"
           " != split_part(encode(substring(m.content from 5 for 12), 'escape'), ' ', 1)"
           "::bigint";
  }
  bool dense_ids() const override { return false; }

private:
  pqxx::connection conn_;
};

enum class crash_backend { sqlite, postgres };

std::ostream& operator<<(std::ostream& out, crash_backend b) {
  return out << (b == crash_backend::sqlite ? "sqlite" : "postgres");
}

} // namespace

BOOST_DATA_TEST_CASE(fifty_sigkills_during_appends_and_compactions_lose_nothing_acknowledged,
                     boost::unit_test::data::make({crash_backend::sqlite,
                                                   crash_backend::postgres}),
                     backend) {
  mneme::testing::temp_dir dir{"mneme-crash"};
  // The writer's target: the file, or the URL of a fresh schema (no password in it).
  std::string db_path = backend == crash_backend::sqlite
                          ? dir.file("crash.db")
                          : mneme::testing::pg_test_cluster::shared().fresh_url();
  auto open_db = [&]() -> std::unique_ptr<crash_check_db> {
    if (backend == crash_backend::sqlite)
      return std::make_unique<sqlite_crash_db>(db_path);
    return std::make_unique<pg_crash_db>(db_path);
  };
  unsigned seed = 20261130;
  std::mt19937 rng(seed);
  BOOST_TEST_MESSAGE("crash test seed=" << seed << " backend=" << backend << " db=" << db_path);
  std::unordered_map<int64_t, size_t> seen; // id -> hash of content, over all trials
  int64_t total_appends = 0;
  int64_t total_compactions = 0;
  int64_t verified_max_id = 0;
  for (int trial = 0; trial < trials; ++trial) {
    auto delay = std::chrono::milliseconds(std::uniform_int_distribution<int>(20, 400)(rng));
    auto out = run_and_kill(db_path, trial, rng(), delay);
    BOOST_REQUIRE_MESSAGE(out.ready, "trial " << trial << ": writer never got ready");
    total_appends += static_cast<int64_t>(out.acked_appends.size());
    total_compactions += static_cast<int64_t>(out.acked_compactions.size());

    auto checked = open_db();
    auto& db = *checked;
    BOOST_REQUIRE_EQUAL(db.integrity(), "ok");
    // 2. acknowledged appends present; no content twice.
    for (auto id : out.acked_appends)
      BOOST_TEST(db.scalar("SELECT count(*) FROM messages WHERE id = $1", id) == 1,
                 "trial " << trial << ": acknowledged append " << id << " is missing");
    BOOST_TEST(db.scalar(db.duplicate_tags_sql()) == 0,
               "trial " << trial << ": a message was stored twice");
    // 3. compactions are all or nothing.
    for (auto [sid, n] : out.acked_compactions)
      BOOST_TEST(db.scalar("SELECT count(*) FROM messages WHERE id = $1 AND is_summary = 1", sid)
                   == 1,
                 "trial " << trial << ": acknowledged compaction " << sid << " is missing");
    BOOST_TEST(db.scalar(db.partial_compactions_sql()) == 0,
               "trial " << trial << ": a compaction was partly applied");
    BOOST_TEST(db.scalar("SELECT count(*) FROM message_state s WHERE s.archived_by != 0 AND"
                         " NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = s.archived_by"
                         " AND m.is_summary = 1)") == 0,
               "trial " << trial << ": a row was archived by a summary that does not exist");
    BOOST_TEST(db.scalar("SELECT count(*) FROM message_state WHERE active = 1 AND compacted = 1")
               == 0);
    // 4. nothing deleted.
    auto rows = db.scalar("SELECT count(*) FROM messages");
    if (db.dense_ids())
      BOOST_TEST(rows == db.scalar("SELECT coalesce(max(id), 0) FROM messages"),
                 "trial " << trial << ": a hole in the ids (a deleted row)");
    BOOST_TEST(rows == db.scalar("SELECT count(*) FROM message_state"));
    BOOST_TEST(rows >= verified_max_id);
    int64_t changed = 0;
    db.each_row([&](int64_t id, const std::string& content) {
      auto h = std::hash<std::string>{}(content);
      auto [pos, added] = seen.emplace(id, h);
      if (!added && pos->second != h)
        ++changed;
    });
    BOOST_TEST(changed == 0, "trial " << trial << ": " << changed << " rows changed content");
    BOOST_TEST(static_cast<int64_t>(seen.size()) == rows);
    verified_max_id = rows;
  }
  BOOST_TEST_MESSAGE("crash test: " << trials << " kills, " << total_appends
                                    << " acknowledged appends, " << total_compactions
                                    << " acknowledged compactions, " << verified_max_id
                                    << " rows");
  BOOST_TEST(total_appends > 0);
  BOOST_TEST(total_compactions > 0);
}

BOOST_AUTO_TEST_SUITE_END() // storage_crash_test
