// The daemon's shutdown ends whatever the model does (SPEC §8.1 HTTP front): the real
// `mneme serve` against `mneme-fakellm` whose chat answers take 45 s; SIGTERM while a
// turn waits for the model. The client gets 503 shutting_down when the drain window
// (2 s here) ends, the process exits 0 by itself long before the model would answer,
// the database lock stays held until the last write (a second daemon started during the
// drain is refused with storage_locked), and a daemon started after the exit finds the
// turn's user message stored. The programs are those of this build (MNEME_BINARY_DIR).
#include <boost/test/unit_test.hpp>

#include <signal.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <httplib.h>

#include "apps/common/api/json_codec.hpp"
#include "tests/child_program.hpp"
#include "tests/temp_dir.hpp"

BOOST_AUTO_TEST_SUITE(serve_shutdown_test)

using json = mneme::api::json;
using namespace std::chrono_literals;
using mneme::testing::child_program;
using mneme::testing::start_mneme_serve;
using mneme::testing::start_fakellm;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in{path};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int start_daemon(child_program& daemon, const std::string& config, const std::string& db,
                 const std::string& stderr_path) {
  std::string seen;
  return start_mneme_serve(daemon, {"--config", config, "--db", db}, seen, stderr_path);
}

} // namespace

BOOST_AUTO_TEST_CASE(sigterm_during_a_45_s_model_call_answers_503_after_the_drain_and_exits_0) {
  mneme::testing::temp_dir dir{"mneme-serve-shutdown"};
  auto scenario = dir.file("slow.yaml");
  std::ofstream{scenario} << "faults:\n"
                             "  - kind: latency\n"
                             "    purpose: chat\n"
                             "    latency_ms: 45000\n";
  child_program fake;
  std::string seen;
  int fake_port = start_fakellm(fake, {"--scenario", scenario}, seen);
  BOOST_REQUIRE_MESSAGE(fake_port > 0, "mneme-fakellm said: " + seen);

  auto config = dir.file("mneme.yaml");
  std::ofstream{config} << "model:\n"
                           "  base_url: http://127.0.0.1:" << fake_port << "\n"
                           "  timeout: 120\n"
                           "gateway:\n"
                           "  request_timeout_seconds: 300\n"
                           "  shutdown_drain_seconds: 2\n"
                           "logging:\n"
                           "  level: warn\n";
  auto db = dir.file("m.db");
  child_program daemon;
  int port = start_daemon(daemon, config, db, dir.file("daemon.err"));
  BOOST_REQUIRE(port > 0);

  std::atomic<int> status{0};
  std::string answer;
  // On a failed check the daemon is killed first, so the client's wait ends at once.
  struct joined_thread {
    std::thread t;
    child_program& daemon;
    ~joined_thread() {
      if (!t.joinable())
        return;
      daemon.signal(SIGKILL);
      t.join();
    }
  };
  joined_thread client{std::thread{[&] {
    httplib::Client c{"127.0.0.1", port};
    c.set_read_timeout(100, 0);
    auto r = c.Post("/v1/sessions/slow-1/turns", R"({"user":"u","content":"hello slow model"})",
                    "application/json");
    if (r) {
      answer = r->body;
      status = r->status;
    } else {
      status = -1;
    }
  }}, daemon};

  // Wait until the model call is under way (the fake counts it when the request is read).
  httplib::Client control{"127.0.0.1", fake_port};
  bool model_called = false;
  for (int i = 0; i < 400 && !model_called; ++i) {
    auto stats = control.Get("/control/stats");
    model_called = stats && json::parse(stats->body)["requests"].value("chat", 0) >= 1;
    if (!model_called)
      std::this_thread::sleep_for(50ms);
  }
  BOOST_REQUIRE(model_called);

  auto signalled = std::chrono::steady_clock::now();
  BOOST_REQUIRE(daemon.signal(SIGTERM));

  // During the drain the first daemon still holds the database: a second one is refused.
  child_program second;
  BOOST_REQUIRE(second.start("mneme", {"serve", "--config", config, "--port", "0", "--db", db},
                             dir.file("second.err")));
  BOOST_TEST(second.wait(20s) == 1);
  BOOST_TEST(read_file(dir.file("second.err")).find("storage_locked") != std::string::npos,
             read_file(dir.file("second.err")));

  // The daemon exits by itself, long before the model's 45 s.
  auto code = daemon.wait(30s);
  auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
    std::chrono::steady_clock::now() - signalled);
  BOOST_TEST_MESSAGE("exit after SIGTERM: " << took.count() << " ms");
  BOOST_TEST(code == 0,
             "exit code " << code << "; stderr: " << read_file(dir.file("daemon.err")));
  client.t.join();
  BOOST_TEST(status.load() == 503, answer);
  if (status.load() == 503)
    BOOST_TEST(json::parse(answer)["error"]["code"] == "shutting_down");

  // The lock is free now, and the turn's user message was written before it went.
  child_program third;
  int again = start_daemon(third, config, db, dir.file("third.err"));
  BOOST_REQUIRE_MESSAGE(again > 0, read_file(dir.file("third.err")));
  httplib::Client c{"127.0.0.1", again};
  auto exported = c.Get("/v1/sessions/slow-1/export?user=u");
  BOOST_REQUIRE(exported);
  BOOST_TEST(exported->status == 200, exported->body);
  BOOST_TEST(exported->body.find("hello slow model") != std::string::npos, exported->body);
  BOOST_TEST(third.stop(SIGTERM, 30s) == 0);
  fake.stop(SIGTERM, 10s);
}

BOOST_AUTO_TEST_SUITE_END() // serve_shutdown_test
