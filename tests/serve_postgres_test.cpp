// The daemon and the CLI on PostgreSQL (issue 26, stage 3): the real `mneme serve` of
// this build (MNEME_BINARY_DIR) with `database.backend: postgres` on a schema of the
// throw-away cluster (testing/pg_test_cluster.hpp), its model `mneme-fakellm`.
// Turns are answered and stored; a second daemon on the same database is refused with
// storage_locked (one writer per database until node leases); a fact written by the
// CLI beside the running daemon
// (PostgreSQL has no writer lock) is read through the daemon; a search through the
// daemon and through the CLI finds a turn (store/pg/pg_recall); after the daemon
// stopped, `mneme show` and `mneme export` read the session from PostgreSQL, and no
// SQLite file was created.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <iterator>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

#include "apps/common/api/json_codec.hpp"
#include "testing/pg_test_cluster.hpp"
#include "tests/child_program.hpp"
#include "tests/temp_dir.hpp"

BOOST_AUTO_TEST_SUITE(serve_postgres_test)

using json = mneme::api::json;
using mneme::testing::child_program;
using mneme::testing::run_program;

namespace {

const char* const pg_turns[] = {"first question about tea", "second question about coffee",
                                "third question about water"};

// The daemon's configuration in `dir`: the fake LLM at `fake_port`, PostgreSQL at
// `url`, and `sqlite_file` as database.path (never used on PostgreSQL). Its path.
std::string write_pg_config(mneme::testing::temp_dir& dir, int fake_port, const std::string& url,
                            const std::string& sqlite_file) {
  auto config = dir.file("mneme.yaml");
  std::ofstream{config} << "model:\n"
                           "  base_url: http://127.0.0.1:" << fake_port << "\n"
                           "database:\n"
                           "  backend: postgres\n"
                           "  url: \"" << url << "\"\n"
                           "  path: " << sqlite_file << "\n"
                           "logging:\n"
                           "  level: warn\n";
  return config;
}

} // namespace

BOOST_AUTO_TEST_CASE(turns_facts_search_and_cli_reads_run_on_postgres) {
  mneme::testing::temp_dir dir{"mneme-serve-pg"};
  child_program fake;
  std::string said;
  int fake_port = mneme::testing::start_fakellm(fake, {}, said);
  BOOST_REQUIRE_MESSAGE(fake_port > 0, "mneme-fakellm said: " + said);

  auto url = mneme::testing::pg_test_cluster::shared().fresh_url();
  auto sqlite_file = dir.file("never.db"); // database.path, unused on PostgreSQL
  auto config = write_pg_config(dir, fake_port, url, sqlite_file);
  {
    mneme::testing::mneme_daemon daemon{{"--config", config}, dir.file("daemon.err")};
    BOOST_TEST(daemon.said.find("(db postgres)") != std::string::npos, daemon.said);
    BOOST_TEST(daemon.said.find("postgresql://") == std::string::npos); // never the URL
    httplib::Client c{"127.0.0.1", daemon.port};
    c.set_read_timeout(60, 0);
    for (const auto* text : pg_turns) {
      auto r = c.Post("/v1/sessions/pg-chat/turns",
                      json{{"user", "alice"}, {"content", text}}.dump(), "application/json");
      BOOST_REQUIRE(r);
      BOOST_TEST(r->status == 200, r->body);
    }

    // A second daemon on the same database is refused (after the lock wait).
    child_program second;
    BOOST_REQUIRE(second.start("mneme", {"serve", "--config", config, "--port", "0"},
                               dir.file("second.err")));
    BOOST_TEST(second.wait(std::chrono::seconds(60)) == 1);
    std::ifstream second_err{dir.file("second.err")};
    std::string second_said{std::istreambuf_iterator<char>{second_err}, {}};
    BOOST_TEST(second_said.find("storage_locked") != std::string::npos, second_said);

    // A fact written by the CLI while the daemon runs, read through the daemon.
    auto set = run_program("mneme", {"facts", "set", "drink", "oolong tea", "--user", "alice",
                                     "--config", config});
    BOOST_TEST(set.code == 0, set.out << set.err);
    auto facts = c.Get("/v1/users/alice/facts?q=oolong");
    BOOST_REQUIRE(facts);
    BOOST_TEST(facts->status == 200, facts->body);
    auto found = json::parse(facts->body)["facts"];
    BOOST_REQUIRE(found.size() == 1u);
    BOOST_TEST(found[0]["key"] == "drink");

    // Search through the daemon's PostgreSQL recall readers finds the turn.
    auto search = c.Get("/v1/search?q=tea&user=alice");
    BOOST_REQUIRE(search);
    BOOST_TEST(search->status == 200, search->body);
    auto hits = json::parse(search->body)["hits"];
    BOOST_REQUIRE_EQUAL(hits.size(), 1u);
    BOOST_TEST(hits[0]["snippet"].get<std::string>().find(">>>tea<<<") != std::string::npos);
    auto after = c.Post("/v1/sessions/pg-chat/messages",
                        json{{"user", "alice"}, {"role", "user"}, {"content", "still here"}}
                          .dump(),
                        "application/json");
    BOOST_REQUIRE(after);
    BOOST_TEST(after->status == 201, after->body);
  }

  // The daemon has stopped: the CLI reads what it stored.
  auto show = run_program("mneme", {"show", "pg-chat", "--user", "alice", "--config", config,
                                    "--json"});
  BOOST_REQUIRE_MESSAGE(show.code == 0, show.out << show.err);
  auto shown = json::parse(show.out);
  std::vector<std::string> user_texts;
  int assistants = 0;
  for (const auto& m : shown["live"]) {
    if (m["role"] == "user")
      user_texts.push_back(m["content"].get<std::string>());
    if (m["role"] == "assistant" && !m["content"].get<std::string>().empty())
      ++assistants;
  }
  BOOST_TEST(user_texts == (std::vector<std::string>{pg_turns[0], pg_turns[1], pg_turns[2],
                                                     "still here"}));
  BOOST_TEST(assistants == 3);

  auto exported = run_program("mneme", {"export", "pg-chat", "--user", "alice", "--config", config});
  BOOST_REQUIRE_MESSAGE(exported.code == 0, exported.err);
  BOOST_TEST(exported.out.find("second question about coffee") != std::string::npos);

  auto cli_search = run_program("mneme", {"search", "tea", "--user", "alice", "--json",
                                          "--config", config});
  BOOST_TEST(cli_search.code == 0, cli_search.out << cli_search.err);
  BOOST_TEST(cli_search.out.find(">>>tea<<<") != std::string::npos, cli_search.out);
  BOOST_TEST(!std::filesystem::exists(sqlite_file));
}

// An operator restarts PostgreSQL while clients append: every append is answered 201
// (the store waits for the server and runs again on a new connection), none is stored
// twice, and the session reads back whole.
BOOST_AUTO_TEST_CASE(appends_during_database_restarts_are_all_answered_and_stored_once) {
  mneme::testing::temp_dir dir{"mneme-serve-pg-restart"};
  child_program fake;
  std::string said;
  int fake_port = mneme::testing::start_fakellm(fake, {}, said);
  BOOST_REQUIRE_MESSAGE(fake_port > 0, "mneme-fakellm said: " + said);
  auto& cluster = mneme::testing::pg_test_cluster::shared();
  auto url = cluster.fresh_url();
  auto config = write_pg_config(dir, fake_port, url, dir.file("never.db"));
  mneme::testing::mneme_daemon daemon{{"--config", config}, dir.file("daemon.err")};
  constexpr int writers = 3;
  constexpr int appends_each = 60;
  std::atomic<int> answered{0};
  std::vector<std::vector<int>> statuses(writers);
  std::vector<std::vector<std::string>> failures(writers);
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; ++w)
    threads.emplace_back([&, w] {
      httplib::Client c{"127.0.0.1", daemon.port};
      c.set_read_timeout(90, 0);
      for (int i = 0; i < appends_each; ++i) {
        auto r = c.Post("/v1/sessions/pg-restart-" + std::to_string(w) + "/messages",
                        json{{"user", "alice"}, {"role", "user"},
                             {"content", "append " + std::to_string(i)}}.dump(),
                        "application/json");
        statuses[w].push_back(r ? r->status : -1);
        if (!r || r->status != 201)
          failures[w].push_back(r ? r->body : "no answer");
        ++answered;
      }
    });
  // Two restarts while the appends run (each after some were answered).
  for (int restart = 1; restart <= 2; ++restart) {
    for (int i = 0; i < 6000 && answered.load() < restart * writers * appends_each / 3; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    cluster.restart();
  }
  for (auto& t : threads)
    t.join();
  for (int w = 0; w < writers; ++w) {
    BOOST_TEST_INFO("writer " << w);
    BOOST_TEST(statuses[w] == std::vector<int>(appends_each, 201),
               boost::test_tools::per_element());
    for (const auto& body : failures[w])
      BOOST_TEST_MESSAGE("writer " << w << " refused: " << body);
  }
  httplib::Client c{"127.0.0.1", daemon.port};
  c.set_read_timeout(60, 0);
  for (int w = 0; w < writers; ++w) {
    auto live = c.Get("/v1/sessions/pg-restart-" + std::to_string(w) + "?user=alice");
    BOOST_REQUIRE(live);
    BOOST_REQUIRE_MESSAGE(live->status == 200, live->body);
    auto shown = json::parse(live->body);
    std::vector<std::string> stored; // the user rows (a session starts with its system row)
    for (const auto& m : shown["live"])
      if (m["role"] == "user")
        stored.push_back(m["content"].get<std::string>());
    std::vector<std::string> sent;
    for (int i = 0; i < appends_each; ++i)
      sent.push_back("append " + std::to_string(i));
    BOOST_TEST(stored == sent, boost::test_tools::per_element());
  }
}

BOOST_AUTO_TEST_SUITE_END() // serve_postgres_test
