// Crash safety of the single writer, shown rather than assumed: 50 trials of a
// writer process (tests/tools/crash_writer) killed with SIGKILL at a random moment
// during appends and compactions, all on the same file. After each kill the file
// is reopened and checked:
//   1. PRAGMA integrity_check is "ok";
//   2. every append acknowledged before the kill is present, and no message
//      appears twice (each content carries a unique tag);
//   3. each compaction is all or nothing: a summary "S n=<count>" archived exactly
//      <count> rows, every archived row names an existing summary, and every
//      acknowledged compaction is present;
//   4. no row was deleted: ids are 1..max without holes, every row seen after an
//      earlier trial is still there with the same content, each has one state row.
// The kill delay is random (seeded, printed); the verdict does not depend on timing.
#include <boost/test/unit_test.hpp>

#include <signal.h>

#include <chrono>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include <sqlite3.h>

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

struct db_handle {
  sqlite3* db = nullptr;
  explicit db_handle(const std::string& path) {
    BOOST_REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
  }
  ~db_handle() { sqlite3_close(db); }
  int64_t scalar(const char* sql, int64_t bind = 0) {
    sqlite3_stmt* st = nullptr;
    BOOST_REQUIRE(sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK);
    if (bind != 0)
      sqlite3_bind_int64(st, 1, bind);
    BOOST_REQUIRE(sqlite3_step(st) == SQLITE_ROW);
    auto v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
  }
  std::string text(const char* sql) {
    sqlite3_stmt* st = nullptr;
    BOOST_REQUIRE(sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK);
    BOOST_REQUIRE(sqlite3_step(st) == SQLITE_ROW);
    std::string v = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return v;
  }
  // Calls f(id, content) for every message row with id > after.
  void each_row(int64_t after, const std::function<void(int64_t, const std::string&)>& f) {
    sqlite3_stmt* st = nullptr;
    BOOST_REQUIRE(sqlite3_prepare_v2(db, "SELECT id, content FROM messages WHERE id > ?1",
                                     -1, &st, nullptr) == SQLITE_OK);
    sqlite3_bind_int64(st, 1, after);
    while (sqlite3_step(st) == SQLITE_ROW)
      f(sqlite3_column_int64(st, 0),
        std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 0 + 1)),
                    static_cast<size_t>(sqlite3_column_bytes(st, 1))));
    sqlite3_finalize(st);
  }
};

} // namespace

BOOST_AUTO_TEST_CASE(fifty_sigkills_during_appends_and_compactions_lose_nothing_acknowledged) {
  mneme::testing::temp_dir dir{"mneme-crash"};
  std::string db_path = dir.file("crash.db");
  unsigned seed = 20261130;
  std::mt19937 rng(seed);
  BOOST_TEST_MESSAGE("crash test seed=" << seed << " file=" << db_path);
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

    db_handle db{db_path};
    BOOST_REQUIRE_EQUAL(db.text("PRAGMA integrity_check"), "ok");
    // 2. acknowledged appends present; no content twice.
    for (auto id : out.acked_appends)
      BOOST_TEST(db.scalar("SELECT count(*) FROM messages WHERE id = ?1", id) == 1,
                 "trial " << trial << ": acknowledged append " << id << " is missing");
    BOOST_TEST(db.scalar("SELECT count(*) FROM (SELECT substr(content, 1, instr(content, ' '))"
                         " AS tag FROM messages WHERE is_summary = 0"
                         " GROUP BY tag HAVING count(*) > 1)") == 0,
               "trial " << trial << ": a message was stored twice");
    // 3. compactions are all or nothing.
    for (auto [sid, n] : out.acked_compactions)
      BOOST_TEST(db.scalar("SELECT count(*) FROM messages WHERE id = ?1 AND is_summary = 1", sid)
                   == 1,
                 "trial " << trial << ": acknowledged compaction " << sid << " is missing");
    BOOST_TEST(db.scalar("SELECT count(*) FROM messages m WHERE m.is_summary = 1 AND"
                         " (SELECT count(*) FROM message_state s WHERE s.archived_by = m.id)"
                         " != CAST(substr(m.content, 5) AS INTEGER)")
                 == 0,
               "trial " << trial << ": a compaction was partly applied");
    BOOST_TEST(db.scalar("SELECT count(*) FROM message_state s WHERE s.archived_by != 0 AND"
                         " NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = s.archived_by"
                         " AND m.is_summary = 1)") == 0,
               "trial " << trial << ": a row was archived by a summary that does not exist");
    BOOST_TEST(db.scalar("SELECT count(*) FROM message_state WHERE active = 1 AND compacted = 1")
               == 0);
    // 4. nothing deleted.
    auto rows = db.scalar("SELECT count(*) FROM messages");
    BOOST_TEST(rows == db.scalar("SELECT coalesce(max(id), 0) FROM messages"),
               "trial " << trial << ": a hole in the ids (a deleted row)");
    BOOST_TEST(rows == db.scalar("SELECT count(*) FROM message_state"));
    BOOST_TEST(rows >= verified_max_id);
    int64_t changed = 0;
    db.each_row(0, [&](int64_t id, const std::string& content) {
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
