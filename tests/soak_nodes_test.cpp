// Integration test of `mneme soak --server URL1,URL2` against two nodes on one
// PostgreSQL database (docs/scale-out.md "Several nodes"): the real mneme-fakellm and two
// `mneme serve` nodes of this build (MNEME_BINARY_DIR) on a fresh schema of the
// throw-away cluster (testing/pg_test_cluster.hpp), the soak runner driving both with
// tests/data/soak/server_short.yaml (four users, a chat outage set through the fake LLM).
// Proves: every acknowledged message is stored once and every marker found although each
// user's calls alternate between the nodes; requests really crossed nodes (a node
// forwarded requests for keys the other owns); the report names both nodes and checks
// RSS per node; a node killed in the middle fails the run with exit 1 naming that node.
#include <boost/test/unit_test.hpp>

#include <signal.h>

#include <chrono>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "testing/loopback_port.hpp"
#include "testing/pg_test_cluster.hpp"
#include "tests/child_program.hpp"
#include "tests/temp_dir.hpp"

BOOST_AUTO_TEST_SUITE(soak_nodes_test)

using json = nlohmann::json;
using namespace std::chrono_literals;
using mneme::testing::child_program;

namespace {

const std::string scenario_file =
  std::string{MNEME_SOURCE_DIR} + "/tests/data/soak/server_short.yaml";

struct node {
  std::string id;
  int port = 0;
  child_program process;
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
};

// The fake model and two nodes on one fresh schema.
struct two_nodes {
  mneme::testing::temp_dir dir{"mneme-soak-nodes"};
  child_program fakellm;
  std::string fakellm_url;
  std::string db_url = mneme::testing::pg_test_cluster::shared().fresh_url();
  node a, b;

  two_nodes() {
    std::string said;
    auto llm_port = mneme::testing::start_fakellm(fakellm, {"--log-level", "warn"}, said,
                                                  dir.file("fakellm.err"));
    BOOST_REQUIRE_MESSAGE(llm_port > 0, "mneme-fakellm said: " + said);
    fakellm_url = "http://127.0.0.1:" + std::to_string(llm_port);
    a.id = "node-a";
    b.id = "node-b";
    for (auto* n : {&a, &b}) {
      n->port = mneme::testing::free_loopback_port();
      auto config = dir.file(n->id + ".yaml");
      std::ofstream{config} << "compression:\n"
                               "  threshold_tokens: 2000\n"
                               "  protect_last_n: 4\n"
                               "  anti_thrash_lock_seconds: 5\n"
                               "  summary_failure_cooldown_seconds: 5\n"
                               "model:\n"
                               "  base_url: " << fakellm_url << "\n"
                               "  timeout: 10\n"
                               "auxiliary:\n"
                               "  compression:\n"
                               "    timeout: 10\n"
                               "database:\n"
                               "  backend: postgres\n"
                               "  url: \"" << db_url << "\"\n"
                               "gateway:\n"
                               "  node_id: " << n->id << "\n"
                               "  advertise_url: " << n->url() << "\n"
                               "  lease_seconds: 3\n"
                               "logging:\n"
                               "  level: warn\n";
      BOOST_REQUIRE(n->process.start("mneme",
                                     {"serve", "--config", config, "--port",
                                      std::to_string(n->port)},
                                     dir.file(n->id + ".err")));
      std::string started;
      int port = n->process.port_after(mneme::testing::serve_listening_marker, 30s, started);
      BOOST_REQUIRE_MESSAGE(port == n->port, n->id << " did not start: " << started);
    }
  }

  std::vector<std::string> soak_args() const {
    return {"soak", "--server", a.url() + "," + b.url(), "--fakellm", fakellm_url,
            "--scenario", scenario_file, "--report", dir.file("report")};
  }

  json report() const {
    std::ifstream in{dir.file("report") + "/report.json"};
    return in ? json::parse(in, nullptr, false) : json{};
  }
};

// A counter of a node's /metrics; -1 when it could not be read.
double metric(const node& n, const std::string& name) {
  httplib::Client c{"127.0.0.1", n.port};
  auto res = c.Get("/metrics");
  if (!res || res->status != 200)
    return -1;
  std::istringstream lines{res->body};
  std::string line;
  while (std::getline(lines, line))
    if (line.rfind(name + " ", 0) == 0)
      return std::stod(line.substr(name.size() + 1));
  return -1;
}

} // namespace

BOOST_AUTO_TEST_CASE(a_soak_through_two_nodes_loses_nothing_and_crosses_nodes) {
  two_nodes rig;
  auto r = mneme::testing::run_program("mneme", rig.soak_args(),
                                       mneme::testing::stderr_mode::merged);
  BOOST_TEST_MESSAGE(r.out);
  BOOST_TEST(r.code == 0, r.out);
  auto j = rig.report();
  BOOST_REQUIRE(j.is_object());
  BOOST_TEST(j["messages_stored"].get<int64_t>() > 0);
  BOOST_TEST(j["lost_messages"].get<int64_t>() == 0);
  BOOST_TEST(j["duplicated_messages"].get<int64_t>() == 0);
  BOOST_TEST(j["markers_planted"].get<int64_t>() > 0);
  BOOST_TEST(j["unfindable_markers"].get<int64_t>() == 0);
  BOOST_TEST(j["violations"].empty(), j["violations"].dump());
  BOOST_TEST(j["faults"]["injected"].get<int64_t>() > 0);
  BOOST_TEST(j["compactions"]["total"].get<int64_t>() > 0);
  BOOST_TEST(j["nodes"] == json::array({rig.a.url(), rig.b.url()}));
  BOOST_TEST(j["rss"]["by_node"].contains(rig.a.url()));
  BOOST_TEST(j["rss"]["by_node"].contains(rig.b.url()));
  // Each user's calls alternate between the nodes: both nodes forwarded requests for
  // keys the other one owns.
  auto fa = metric(rig.a, "mneme_requests_forwarded_total");
  auto fb = metric(rig.b, "mneme_requests_forwarded_total");
  BOOST_TEST_MESSAGE("forwarded: node-a " << fa << ", node-b " << fb);
  BOOST_TEST(fa > 0);
  BOOST_TEST(fb > 0);
  std::ifstream md{rig.dir.file("report") + "/report.md"};
  std::string text{std::istreambuf_iterator<char>{md}, {}};
  BOOST_TEST(text.find(rig.a.url()) != std::string::npos);
  BOOST_TEST(text.find(rig.b.url()) != std::string::npos);
  BOOST_TEST(rig.a.process.stop(SIGTERM, 30s) == 0);
  BOOST_TEST(rig.b.process.stop(SIGTERM, 30s) == 0);
}

BOOST_AUTO_TEST_CASE(a_node_killed_in_the_middle_fails_the_run_naming_that_node) {
  two_nodes rig;
  auto running = std::async(std::launch::async, [&] {
    return mneme::testing::run_program("mneme", rig.soak_args(),
                                       mneme::testing::stderr_mode::merged);
  });
  std::this_thread::sleep_for(2500ms);
  BOOST_TEST(rig.b.process.stop(SIGKILL) == 128 + SIGKILL);
  auto r = running.get();
  BOOST_TEST(r.code == 1, r.out);
  auto j = rig.report();
  BOOST_REQUIRE(j.is_object());
  bool named = false;
  for (const auto& v : j["violations"])
    named = named
            || (v["invariant"] == "target_down"
                && v.dump().find("node at " + rig.b.url()) != std::string::npos);
  BOOST_TEST(named, j["violations"].dump());
  BOOST_TEST(rig.a.process.stop(SIGTERM, 30s) == 0);
}

BOOST_AUTO_TEST_SUITE_END() // soak_nodes_test
