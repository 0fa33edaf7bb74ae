// Durability of the daemon itself (tests/storage_crash_test.cpp covers the store
// alone): the real `mneme serve` of this build (MNEME_BINARY_DIR) on a temporary
// database, four HTTP writers appending concurrently (each to its own key and all to
// one shared key), `kill -9` in the middle of the load, a restart on the same file.
// After every kill:
//   1. SQLite: PRAGMA integrity_check of the file is "ok";
//   2. every acknowledged append (201) is in the restarted daemon's export exactly once,
//      under the id its acknowledgement named; an append without an acknowledgement is
//      there at most once; nothing appears that no writer sent.
// With a compaction in flight at the kill (mneme-fakellm reads the summary request and
// never answers it; the kill comes only once the session's snapshot says
// compaction_in_flight and the fake counted the summary request, with appends to the
// compacting session acknowledged meanwhile): after the restart no row of the session
// is archived and none is a summary (the compaction is all or nothing; it cannot have
// committed without an answer), the snapshot's live rows are exactly the export's live
// rows in order, no compaction is in flight, and a new compaction commits, archiving
// only rows it names while every acknowledged row stays present once. The other side:
// a compaction whose 200 came back right before the kill is stored whole (its summary
// live, exactly the rows it reported archived by it, the live context the stored one).
// Last, the online backup of docs/operations.md under the same load (its own case below).
// The kill cases run on both backends: a SQLite file, and a schema of the throw-away
// PostgreSQL cluster (testing/pg_test_cluster.hpp; the daemon dies, the server lives
// on, and PostgreSQL checks its own pages); the online backup is SQLite's.
// The kill comes after a count of acknowledgements, never after a time; no verdict
// depends on how long anything took (every wait has a bound that fails the test).
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <signal.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "testing/pg_test_cluster.hpp"
#include "tests/child_program.hpp"
#include "tests/temp_dir.hpp"

BOOST_AUTO_TEST_SUITE(daemon_crash_test)

using json = nlohmann::json;
using namespace std::chrono_literals;
using mneme::testing::child_program;

namespace {

constexpr int writer_count = 4;
constexpr int max_appends_per_writer = 5000; // a bound: the kill comes long before
const std::string shared_key = "crash-shared";
const std::string compact_key = "crash-compact";

std::string own_key(int writer) { return "crash-own-" + std::to_string(writer); }

// One append a writer sent: where, what, and the id of its 201 (0: not acknowledged).
struct sent_append {
  std::string key;
  std::string content;
  int64_t acked_id = 0;
};

// The appends every writer sent, in one place (written by the writers under `mtx`).
struct append_ledger {
  std::mutex mtx;
  std::vector<sent_append> sent;
  std::atomic<int> acked{0};

  void record(sent_append a) {
    std::lock_guard<std::mutex> guard{mtx};
    if (a.acked_id > 0)
      ++acked;
    sent.push_back(std::move(a));
  }
  int acked_for(const std::string& key) {
    std::lock_guard<std::mutex> guard{mtx};
    int n = 0;
    for (const auto& a : sent)
      n += a.key == key && a.acked_id > 0 ? 1 : 0;
    return n;
  }
};

// POSTs one message; the id of its 201, 0 for anything else (no answer included).
int64_t append_one(httplib::Client& c, const std::string& key, const std::string& role,
                   const std::string& content) {
  json body = {{"user", "crash-user"}, {"role", role}, {"content", content}};
  auto r = c.Post(("/v1/sessions/" + key + "/messages").c_str(), body.dump(),
                  "application/json");
  if (!r || r->status != 201)
    return 0;
  auto answer = json::parse(r->body, nullptr, false);
  return answer.is_object() ? answer.value("id", int64_t{0}) : 0;
}

// Four writers appending until the first append that gets no 201 (the daemon died) or
// `stop`: writer w alternates between `first_key(w)` and the shared key.
class writer_crew {
public:
  writer_crew(int port, std::string round, std::function<std::string(int)> first_key,
              append_ledger& ledger)
      : ledger_{ledger} {
    for (int w = 0; w < writer_count; ++w)
      threads_.emplace_back([this, port, round, first_key, w] {
        httplib::Client c{"127.0.0.1", port};
        c.set_connection_timeout(10, 0);
        c.set_read_timeout(60, 0);
        for (int n = 0; n < max_appends_per_writer && !stop_; ++n) {
          sent_append a;
          a.key = n % 2 == 0 ? first_key(w) : shared_key;
          a.content = "crash-" + round + "-w" + std::to_string(w) + "-n" + std::to_string(n)
                      + " " + std::string(40, static_cast<char>('a' + n % 26));
          a.acked_id = append_one(c, a.key, n % 3 == 0 ? "assistant" : "user", a.content);
          bool acked = a.acked_id > 0;
          ledger_.record(std::move(a));
          if (!acked)
            break;
        }
      });
  }
  ~writer_crew() { join(); }
  // Stops the writers (after a kill their requests fail at once) and waits for them.
  void join() {
    stop_ = true;
    for (auto& t : threads_)
      if (t.joinable())
        t.join();
  }

private:
  append_ledger& ledger_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

// Waits (bounded) until `held()`; false when it never held.
bool wait_until(const std::function<bool()>& held, std::chrono::seconds max = 60s) {
  auto deadline = std::chrono::steady_clock::now() + max;
  while (!held()) {
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

std::string pragma_integrity(const std::string& db) {
  sqlite3* conn = nullptr;
  std::string out = "cannot open";
  if (sqlite3_open_v2(db.c_str(), &conn, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(conn, "PRAGMA integrity_check", -1, &st, nullptr) == SQLITE_OK) {
      out.clear();
      while (sqlite3_step(st) == SQLITE_ROW)
        out += reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(conn);
  return out;
}

// Copies the database `from` into `to` with SQLite's online backup, 100 pages a step as
// the sqlite3 shell's `.backup` does (a step that finds the file busy is tried again): the
// backup docs/operations.md tells operators to run while the daemon writes. SQLITE_DONE
// when the copy is complete.
int online_backup(const std::string& from, const std::string& to) {
  sqlite3* src = nullptr;
  sqlite3* dst = nullptr;
  int rc = sqlite3_open_v2(from.c_str(), &src, SQLITE_OPEN_READWRITE, nullptr);
  if (rc == SQLITE_OK)
    rc = sqlite3_open_v2(to.c_str(), &dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (rc == SQLITE_OK) {
    sqlite3_backup* b = sqlite3_backup_init(dst, "main", src, "main");
    rc = b == nullptr ? sqlite3_errcode(dst) : SQLITE_OK;
    for (int steps = 0; b != nullptr && steps < 100000; ++steps) {
      rc = sqlite3_backup_step(b, 100);
      if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      else if (rc != SQLITE_OK)
        break;
    }
    if (b != nullptr)
      sqlite3_backup_finish(b);
  }
  sqlite3_close(dst);
  sqlite3_close(src);
  return rc;
}

int64_t user_version(const std::string& db) {
  sqlite3* conn = nullptr;
  int64_t version = -1;
  if (sqlite3_open_v2(db.c_str(), &conn, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(conn, "PRAGMA user_version", -1, &st, nullptr) == SQLITE_OK
        && sqlite3_step(st) == SQLITE_ROW)
      version = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
  }
  sqlite3_close(conn);
  return version;
}

std::string slurp(const std::string& path) {
  std::ifstream in{path};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The export of `key` (every row, whatever its state), one JSON object per row.
std::vector<json> export_rows(httplib::Client& c, const std::string& key) {
  auto r = c.Get(("/v1/sessions/" + key + "/export?user=crash-user").c_str()); // its namespace
  BOOST_REQUIRE_MESSAGE(r, "no answer to the export of " + key);
  BOOST_REQUIRE_MESSAGE(r->status == 200, key + ": " + r->body);
  std::vector<json> rows;
  std::istringstream in{r->body};
  std::string line;
  while (std::getline(in, line))
    if (!line.empty())
      rows.push_back(json::parse(line));
  return rows;
}

// Check 2 of the header against the restarted daemon: every acknowledged append once
// under its id, every other one at most once, no content that no writer sent.
void check_ledger(httplib::Client& c, append_ledger& ledger) {
  std::set<std::string> keys;
  std::map<std::string, const sent_append*> by_content;
  for (const auto& a : ledger.sent) {
    keys.insert(a.key);
    by_content[a.content] = &a;
  }
  std::map<std::string, std::vector<int64_t>> found; // content -> ids of its rows
  for (const auto& key : keys)
    for (const auto& row : export_rows(c, key)) {
      auto content = row.value("content", std::string{});
      if (content.rfind("crash-", 0) != 0)
        continue;
      BOOST_TEST(by_content.count(content) == 1u, "a row no writer sent: " << content);
      found[content].push_back(row.value("id", int64_t{0}));
    }
  int acked = 0;
  int unacked_present = 0;
  for (const auto& a : ledger.sent) {
    const auto& ids = found[a.content];
    if (a.acked_id > 0) {
      ++acked;
      BOOST_TEST(ids.size() == 1u, a.content << " (acked as id " << a.acked_id << ") found "
                                              << ids.size() << " times");
      if (ids.size() == 1u)
        BOOST_TEST(ids[0] == a.acked_id, a.content);
    } else {
      BOOST_TEST(ids.size() <= 1u, a.content << " (not acked) found " << ids.size() << " times");
      unacked_present += ids.empty() ? 0 : 1;
    }
  }
  BOOST_TEST_MESSAGE("acknowledged appends checked: " << acked << "; unacknowledged ones present: "
                                                      << unacked_present << " of "
                                                      << ledger.sent.size() - acked);
}

enum class daemon_backend { sqlite, postgres };

std::ostream& operator<<(std::ostream& out, daemon_backend b) {
  return out << (b == daemon_backend::sqlite ? "sqlite" : "postgres");
}

const std::vector<daemon_backend> both_daemon_backends{daemon_backend::sqlite,
                                                       daemon_backend::postgres};

// A mneme-fakellm and the daemon's configuration on a temporary directory; the daemon
// is started, killed and restarted on the same database (the file `db`, or a fresh
// schema of the test cluster).
struct crash_rig {
  mneme::testing::temp_dir dir{"mneme-daemon-crash"};
  child_program fakellm;
  child_program daemon;
  int fake_port = 0;
  int port = 0;
  std::string db = dir.file("mneme.db");
  std::string config = dir.file("mneme.yaml");
  int starts = 0;
  daemon_backend backend;

  // `scenario_yaml`: the fake's fault plan ("" = none).
  explicit crash_rig(const std::string& scenario_yaml,
                     daemon_backend b = daemon_backend::sqlite)
    : backend(b) {
    std::vector<std::string> args{"--log-level", "warn"};
    if (!scenario_yaml.empty()) {
      std::ofstream{dir.file("scenario.yaml")} << scenario_yaml;
      args.insert(args.end(), {"--scenario", dir.file("scenario.yaml")});
    }
    std::string seen;
    fake_port = mneme::testing::start_fakellm(fakellm, args, seen, dir.file("fakellm.err"));
    BOOST_REQUIRE_MESSAGE(fake_port > 0, "mneme-fakellm said: " + seen);
    // Automatic compaction off (only the test's manual one runs); summary calls may wait
    // 15 minutes, far beyond the test, so one the fake leaves unanswered stays in flight.
    std::ofstream{config} << "compression:\n"
                             "  enabled: false\n"
                             "  protect_first_n: 1\n"
                             "  protect_last_n: 4\n"
                             "  context_timeout_seconds: 900\n"
                             "  context_total_ceiling_seconds: 900\n"
                             "auxiliary:\n"
                             "  compression:\n"
                             "    timeout: 900\n"
                             "model:\n"
                             "  base_url: http://127.0.0.1:" << fake_port << "\n"
                             "  timeout: 10\n"
                             "gateway:\n"
                             "  request_timeout_seconds: 1000\n"
                             "logging:\n"
                             "  level: warn\n";
    if (backend == daemon_backend::postgres)
      std::ofstream{config, std::ios::app}
        << "database:\n"
           "  backend: postgres\n"
           "  url: \"" << mneme::testing::pg_test_cluster::shared().fresh_url() << "\"\n";
  }
  ~crash_rig() {
    if (daemon.running())
      daemon.stop(SIGTERM, 30s);
    fakellm.stop(SIGTERM, 10s);
  }

  void start_daemon() {
    std::string seen;
    auto err = dir.file("serve-" + std::to_string(++starts) + ".err");
    std::vector<std::string> args{"--config", config};
    if (backend == daemon_backend::sqlite)
      args.insert(args.end(), {"--db", db});
    port = mneme::testing::start_mneme_serve(daemon, args, seen, err);
    BOOST_REQUIRE_MESSAGE(port > 0, "mneme serve did not start: " + seen + slurp(err));
  }

  void kill_daemon() {
    BOOST_REQUIRE(daemon.running());
    BOOST_TEST(daemon.stop(SIGKILL, 30s) == 128 + SIGKILL);
    if (backend != daemon_backend::sqlite)
      return;
    auto integrity = pragma_integrity(db);
    BOOST_TEST(integrity == "ok", "integrity_check after kill -9: " << integrity);
  }

  std::unique_ptr<httplib::Client> client() const {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", port);
    c->set_read_timeout(60, 0);
    return c;
  }

  json fake_stats() const {
    httplib::Client c{"127.0.0.1", fake_port};
    auto r = c.Get("/control/stats");
    return r && r->status == 200 ? json::parse(r->body, nullptr, false) : json{};
  }
};

json snapshot(httplib::Client& c, const std::string& key, bool live) {
  auto r = c.Get(("/v1/sessions/" + key + "?user=crash-user" + (live ? "" : "&live=false")).c_str());
  if (!r || r->status != 200)
    return json{};
  return json::parse(r->body, nullptr, false);
}


// The session's live context as its actor holds it (the snapshot) holds exactly its
// stored live rows (the export), in transcript order (a summary stands where the first
// row it replaced stood: its key is replaced_first_id, every other row's its id), and no
// compaction is in flight.
void check_live_matches_store(httplib::Client& c, const std::string& key) {
  std::set<int64_t> exported_live;
  for (const auto& row : export_rows(c, key))
    if (row.value("state", std::string{}) == "live")
      exported_live.insert(row.value("id", int64_t{0}));
  auto snap = snapshot(c, key, true);
  BOOST_REQUIRE_MESSAGE(snap.is_object(), "no snapshot of " + key);
  BOOST_TEST(!snap.value("compaction_in_flight", true));
  std::set<int64_t> snapshot_live;
  int64_t previous_key = 0;
  for (const auto& m : snap["live"]) {
    auto id = m.value("id", int64_t{0});
    snapshot_live.insert(id);
    auto order_key = m.value("is_summary", false) ? m.value("replaced_first_id", int64_t{0}) : id;
    BOOST_TEST(order_key > previous_key, "live row " << id << " out of transcript order");
    previous_key = order_key;
  }
  BOOST_TEST(snapshot_live == exported_live, "the live context differs from the stored live rows");
  BOOST_TEST(snap.value("live_messages", int64_t{0}) == static_cast<int64_t>(exported_live.size()));
}

// The compaction `report` (a 200 of POST /compact) is stored whole: its summary is a live
// summary row, exactly report.archived_rows rows are archived by it, all within the range
// it names, and no row is archived by anything else.
void check_compaction_stored_whole(httplib::Client& c, const std::string& key,
                                   const json& report) {
  BOOST_REQUIRE_MESSAGE(report.value("committed", false), report.dump());
  auto summary_id = report.value("summary_id", int64_t{0});
  auto rows = export_rows(c, key);
  const json* summary = nullptr;
  for (const auto& row : rows)
    if (row.value("id", int64_t{0}) == summary_id)
      summary = &row;
  BOOST_REQUIRE_MESSAGE(summary != nullptr, "summary " << summary_id << " is not stored");
  BOOST_TEST(summary->value("is_summary", false));
  BOOST_TEST(summary->value("state", std::string{}) == "live");
  auto first = summary->value("replaced_first_id", int64_t{0});
  auto last = summary->value("replaced_last_id", int64_t{0});
  int archived = 0;
  for (const auto& row : rows) {
    if (row.value("state", std::string{}) != "archived")
      continue;
    ++archived;
    auto id = row.value("id", int64_t{0});
    BOOST_TEST(row.value("archived_by", int64_t{0}) == summary_id, row.dump());
    BOOST_TEST((id >= first && id <= last), row.dump());
  }
  BOOST_TEST(archived > 0);
  BOOST_TEST(archived == report.value("archived_rows", -1));
}

// Appends 24 rows (user and assistant in turn) to `key` one by one, each acknowledged:
// something to compact beyond the protected head and tail.
void seed_session(int port, const std::string& key, append_ledger& ledger) {
  httplib::Client c{"127.0.0.1", port};
  c.set_read_timeout(60, 0);
  for (int n = 0; n < 24; ++n) {
    sent_append a{key, "crash-seed-n" + std::to_string(n) + " " + std::string(300, 'x')};
    a.acked_id = append_one(c, key, n % 2 == 0 ? "user" : "assistant", a.content);
    BOOST_REQUIRE(a.acked_id > 0);
    ledger.record(std::move(a));
  }
}

json post_compact(httplib::Client& c, const std::string& key) {
  auto r = c.Post(("/v1/sessions/" + key + "/compact?user=crash-user").c_str(), "{}",
                  "application/json");
  BOOST_REQUIRE_MESSAGE(r, "no answer to the compaction of " + key);
  BOOST_REQUIRE_MESSAGE(r->status == 200, r->body);
  return json::parse(r->body);
}

// Writer 0 appends to the compacting session, the others to their own keys; all share
// crash-shared.
std::string compacting_first_key(int writer) {
  return writer == 0 ? compact_key : own_key(writer);
}
} // namespace

BOOST_DATA_TEST_CASE(every_acknowledged_append_survives_kill_9_of_the_daemon_once,
                     boost::unit_test::data::make(both_daemon_backends), backend) {
  crash_rig rig{"", backend};
  append_ledger ledger;
  constexpr int rounds = 3;
  constexpr int acks_per_round = 150;
  for (int round = 1; round <= rounds; ++round) {
    rig.start_daemon();
    int acked_before = ledger.acked.load();
    {
      writer_crew crew{rig.port, "r" + std::to_string(round), own_key, ledger};
      BOOST_REQUIRE_MESSAGE(
        wait_until([&] { return ledger.acked.load() >= acked_before + acks_per_round; }),
        "the writers got only " << ledger.acked.load() - acked_before << " acknowledgements");
      rig.kill_daemon(); // the writers are still sending
      crew.join();
    }
    rig.start_daemon();
    auto c = rig.client();
    check_ledger(*c, ledger);
    rig.kill_daemon(); // the next round starts on a file killed again, idle this time
  }
  rig.start_daemon();
  BOOST_TEST(rig.daemon.stop(SIGTERM, 30s) == 0);
}

BOOST_DATA_TEST_CASE(
  a_compaction_in_flight_at_kill_9_is_all_or_nothing_and_the_session_stays_valid,
  boost::unit_test::data::make(both_daemon_backends), backend) {
  // The fake reads every summary request and never answers it.
  crash_rig rig{"faults:\n"
                "  - kind: silence\n"
                "    purpose: summary\n",
                backend};
  append_ledger ledger;
  rig.start_daemon();
  seed_session(rig.port, compact_key, ledger);

  std::atomic<int> compact_status{0};
  std::thread compaction{[&] {
    httplib::Client c{"127.0.0.1", rig.port};
    c.set_read_timeout(1000, 0);
    auto r = c.Post(("/v1/sessions/" + compact_key + "/compact?user=crash-user").c_str(), "{}",
                    "application/json");
    compact_status = r ? r->status : -1;
  }};
  struct join_on_exit {
    std::thread& t;
    crash_rig& rig;
    ~join_on_exit() {
      if (rig.daemon.running())
        rig.daemon.signal(SIGKILL); // a failed check must not leave the compaction waiting
      if (t.joinable())
        t.join();
    }
  } joined{compaction, rig};

  auto c = rig.client();
  BOOST_REQUIRE_MESSAGE(wait_until([&] {
    auto s = rig.fake_stats();
    return s.is_object() && s["requests"].value("summary", 0) >= 1;
  }), "the summarizer was never called");
  BOOST_REQUIRE_MESSAGE(wait_until([&] {
    return snapshot(*c, compact_key, false).value("compaction_in_flight", false);
  }), "the snapshot never said compaction_in_flight");

  {
    int seeded = ledger.acked.load();
    writer_crew crew{rig.port, "c", compacting_first_key, ledger};
    BOOST_REQUIRE(wait_until([&] {
      return ledger.acked.load() >= seeded + 120 && ledger.acked_for(compact_key) >= 24 + 10;
    }));
    // Still in flight right before the kill: the fake never answers, the timeout is 900 s.
    BOOST_REQUIRE(snapshot(*c, compact_key, false).value("compaction_in_flight", false));
    BOOST_REQUIRE_EQUAL(rig.fake_stats()["requests"].value("summary", 0), 1);
    rig.kill_daemon();
    crew.join();
  }
  compaction.join();
  BOOST_TEST(compact_status.load() != 200, "the compaction answered before the kill");

  // Restart against a fake that answers summaries again.
  {
    httplib::Client fake{"127.0.0.1", rig.fake_port};
    auto cleared = fake.Delete("/control/faults");
    BOOST_REQUIRE(cleared && cleared->status / 100 == 2);
  }
  rig.start_daemon();
  c = rig.client();
  check_ledger(*c, ledger);

  for (const auto& row : export_rows(*c, compact_key)) {
    BOOST_TEST(row.value("state", std::string{}) != "archived", row.dump());
    BOOST_TEST(!row.value("is_summary", false), row.dump());
    BOOST_TEST(row.value("archived_by", int64_t{0}) == 0, row.dump());
  }
  check_live_matches_store(*c, compact_key);

  // The session compacts after the restart, and every acknowledged row is still there once.
  check_compaction_stored_whole(*c, compact_key, post_compact(*c, compact_key));
  check_live_matches_store(*c, compact_key);
  check_ledger(*c, ledger);
  BOOST_TEST(rig.daemon.stop(SIGTERM, 30s) == 0);
}

// The other side of all or nothing: a compaction whose 200 came back is there whole after
// a kill -9 that follows it at once, with the writers still appending.
BOOST_DATA_TEST_CASE(a_compaction_answered_right_before_kill_9_is_stored_whole,
                     boost::unit_test::data::make(both_daemon_backends), backend) {
  crash_rig rig{"", backend};
  append_ledger ledger;
  rig.start_daemon();
  seed_session(rig.port, compact_key, ledger);
  json report;
  {
    int seeded = ledger.acked.load();
    writer_crew crew{rig.port, "k", compacting_first_key, ledger};
    BOOST_REQUIRE(wait_until([&] { return ledger.acked.load() >= seeded + 40; }));
    auto c = rig.client();
    report = post_compact(*c, compact_key);
    rig.kill_daemon();
    crew.join();
  }
  rig.start_daemon();
  auto c = rig.client();
  check_ledger(*c, ledger);
  check_compaction_stored_whole(*c, compact_key, report);
  check_live_matches_store(*c, compact_key);
  BOOST_TEST(rig.daemon.stop(SIGTERM, 30s) == 0);
}

// docs/operations.md's backup while running: SQLite's online backup of the file under
// load never makes an append fail (the writer lock is mneme's own, the backup only reads),
// the copy is a sound database at the same schema version, and a daemon started on the
// copy serves every append acknowledged before the backup began, once.
BOOST_AUTO_TEST_CASE(an_online_backup_under_load_holds_every_append_acknowledged_before_it) {
  crash_rig rig{""};
  append_ledger ledger;
  rig.start_daemon();
  std::set<std::string> acked_before; // contents acknowledged before the backup began
  auto copy = rig.dir.file("backup.db");
  {
    writer_crew crew{rig.port, "b", own_key, ledger};
    BOOST_REQUIRE(wait_until([&] { return ledger.acked.load() >= 100; }));
    {
      std::lock_guard<std::mutex> guard{ledger.mtx};
      for (const auto& a : ledger.sent)
        if (a.acked_id > 0)
          acked_before.insert(a.content);
    }
    BOOST_TEST(online_backup(rig.db, copy) == SQLITE_DONE);
    // The daemon goes on writing after the backup.
    int after = ledger.acked.load();
    BOOST_REQUIRE(wait_until([&] { return ledger.acked.load() >= after + 100; }));
    crew.join();
  }
  for (const auto& a : ledger.sent)
    BOOST_TEST(a.acked_id > 0, a.content << " was refused while the backup ran");
  BOOST_TEST(pragma_integrity(copy) == "ok");
  BOOST_TEST(user_version(copy) == user_version(rig.db));
  BOOST_TEST(rig.daemon.stop(SIGTERM, 30s) == 0);

  // The copy as a database of its own: what was acknowledged before the backup is in it
  // once; later appends may be in it or not, never twice.
  append_ledger expected;
  for (const auto& a : ledger.sent)
    expected.record({a.key, a.content, acked_before.count(a.content) == 1 ? a.acked_id : 0});
  rig.db = copy;
  rig.start_daemon();
  auto c = rig.client();
  check_ledger(*c, expected);
  BOOST_TEST(rig.daemon.stop(SIGTERM, 30s) == 0);
}

BOOST_AUTO_TEST_SUITE_END() // daemon_crash_test
