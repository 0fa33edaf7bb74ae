// The real `mneme serve` process (MNEME_BINARY_DIR/mneme) on a temporary database with
// the builtin fake LLM: appends and turns from several threads, SIGTERM in the middle of
// the load, exit code 0; a restart on the same database: every acknowledged append is
// stored exactly once (JSONL export), and the sessions continue (a turn on an old key
// answers in the same session, whose live context is the old one plus the turn).
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

// The API's JSON type; including a project header also links mneme_core and with it
// cpp-httplib (CMakeLists.txt links tests that include only policies/ without them).
#include "apps/common/api/json_codec.hpp"
#include "tests/child_program.hpp"
#include "tests/temp_dir.hpp"

BOOST_AUTO_TEST_SUITE(serve_daemon_test)

using json = mneme::api::json;
using namespace std::chrono_literals;

namespace {

// A running `mneme serve` (tests/child_program.hpp) and the first line it printed.
struct daemon_process {
  mneme::testing::child_program child;
  int port = 0;
  std::string first_line;

  void start(const std::string& config, const std::string& db) {
    std::string said;
    port = mneme::testing::start_mneme_serve(child, {"--config", config, "--db", db}, said);
    BOOST_REQUIRE_MESSAGE(port > 0, "daemon said: '" + said + "'");
    first_line = said.substr(0, said.find('\n'));
  }

  // SIGTERM, then the exit status (-1 when it had to be killed after `max`).
  int terminate(std::chrono::milliseconds max = 30s) { return child.stop(SIGTERM, max); }
};

std::string write_config(const std::string& dir) {
  auto path = dir + "/mneme.yaml";
  std::ofstream{path} << "model:\n"
                         "  base_url: builtin\n"
                         "  timeout: 10\n"
                         "auxiliary:\n"
                         "  compression:\n"
                         "    timeout: 10\n"
                         "gateway:\n"
                         "  request_timeout_seconds: 30\n"
                         "logging:\n"
                         "  level: warn\n";
  return path;
}

// What the load threads got acknowledged.
struct acknowledged {
  std::mutex m;
  std::map<std::string, std::vector<std::string>> appends; // key -> contents (201)
  std::map<std::string, int> turns;                        // key -> answered turns
};

void load(int port, const std::string& key, std::atomic<bool>& stop, acknowledged& acked) {
  httplib::Client c{"127.0.0.1", port};
  c.set_read_timeout(30, 0);
  for (int i = 0; !stop.load(); ++i) {
    if (i % 5 == 4) {
      json body{{"user", "u-" + key}, {"content", key + " turn " + std::to_string(i)}};
      auto r = c.Post(("/v1/sessions/" + key + "/turns").c_str(), body.dump(),
                      "application/json");
      if (!r)
        return; // the daemon is gone
      if (r->status == 200) {
        std::lock_guard<std::mutex> g{acked.m};
        ++acked.turns[key];
      }
      continue;
    }
    auto content = key + " append " + std::to_string(i);
    json body{{"user", "u-" + key}, {"role", "user"}, {"content", content}};
    auto r = c.Post(("/v1/sessions/" + key + "/messages").c_str(), body.dump(),
                    "application/json");
    if (!r)
      return;
    if (r->status == 201) {
      std::lock_guard<std::mutex> g{acked.m};
      acked.appends[key].push_back(content);
    }
  }
}

std::vector<json> export_rows(httplib::Client& c, const std::string& key) {
  auto r = c.Get(("/v1/sessions/" + key + "/export?user=u-" + key).c_str()); // its namespace
  BOOST_REQUIRE(r);
  BOOST_REQUIRE_MESSAGE(r->status == 200, r->body);
  std::vector<json> rows;
  std::istringstream in{r->body};
  for (std::string line; std::getline(in, line);)
    rows.push_back(json::parse(line));
  return rows;
}

json state(httplib::Client& c, const std::string& key) {
  auto r = c.Get(("/v1/sessions/" + key + "?user=u-" + key).c_str());
  BOOST_REQUIRE(r);
  BOOST_REQUIRE_MESSAGE(r->status == 200, r->body);
  return json::parse(r->body);
}

} // namespace

BOOST_AUTO_TEST_CASE(sigterm_mid_load_exits_0_and_a_restart_keeps_every_acknowledged_append) {
  mneme::testing::temp_dir dir{"mneme-serve-daemon"};
  auto config = write_config(dir.path());
  auto db = dir.file("mneme.db");
  const std::vector<std::string> keys{"k0", "k1", "k2", "k3"};
  acknowledged acked;
  {
    daemon_process d;
    d.start(config, db);
    BOOST_TEST(d.first_line.find("(db " + db + ")") != std::string::npos);
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (const auto& k : keys)
      threads.emplace_back([&, k] { load(d.port, k, stop, acked); });
    // Let the load run until every key has acknowledged rows, then stop the daemon
    // under load.
    auto deadline = std::chrono::steady_clock::now() + 15s;
    for (;;) {
      {
        std::lock_guard<std::mutex> g{acked.m};
        size_t ready = 0;
        for (const auto& k : keys)
          ready += acked.appends[k].size() >= 20 && acked.turns[k] >= 2 ? 1 : 0;
        if (ready == keys.size())
          break;
      }
      BOOST_REQUIRE_MESSAGE(std::chrono::steady_clock::now() < deadline,
                            "the load made no progress");
      std::this_thread::sleep_for(10ms);
    }
    auto code = d.terminate();
    stop.store(true);
    for (auto& t : threads)
      t.join();
    BOOST_TEST(code == 0);
    size_t appended = 0;
    for (const auto& k : keys)
      appended += acked.appends[k].size();
    BOOST_TEST_MESSAGE("acknowledged before and during the shutdown: " << appended
                                                                         << " appends");
  }

  daemon_process d;
  d.start(config, db);
  httplib::Client c{"127.0.0.1", d.port};
  c.set_read_timeout(30, 0);
  for (const auto& k : keys) {
    std::map<std::string, int> stored;
    for (const auto& row : export_rows(c, k))
      ++stored[row["content"].get<std::string>()];
    for (const auto& content : acked.appends[k])
      BOOST_TEST(stored[content] == 1, k << ": '" << content << "' stored " << stored[content]
                                          << " times");
    // The session continues: same id, the old live context plus the turn.
    auto before = state(c, k);
    json body{{"content", "still there?"}};
    auto r = c.Post(("/v1/sessions/" + k + "/turns?user=u-" + k).c_str(), body.dump(),
                    "application/json");
    BOOST_REQUIRE(r);
    BOOST_REQUIRE_MESSAGE(r->status == 200, r->body);
    auto reply = json::parse(r->body);
    BOOST_TEST(!reply["answer"].get<std::string>().empty());
    BOOST_TEST(reply["session_id"] == before["session"]["id"]);
    BOOST_TEST(before["session"]["user_id"] == "u-" + k);
    auto after = state(c, k);
    auto old_live = before["live"];
    auto new_live = after["live"];
    BOOST_REQUIRE(new_live.size() == old_live.size() + 2);
    for (size_t i = 0; i < old_live.size(); ++i)
      BOOST_TEST(new_live[i]["id"] == old_live[i]["id"]);
    BOOST_TEST(new_live[old_live.size()]["content"] == "still there?");
    BOOST_TEST(new_live[old_live.size() + 1]["role"] == "assistant");
  }
  BOOST_TEST(d.terminate() == 0);
}

BOOST_AUTO_TEST_SUITE_END() // serve_daemon_test
