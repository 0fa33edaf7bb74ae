// Integration test of `mneme soak --server`: the real mneme-fakellm and `mneme serve`
// (programs of this build, loopback ports, a temporary database; the daemon's model is
// the fake LLM, its API needs a bearer token) and the soak runner driving the daemon over
// HTTP with tests/data/soak/server_short.yaml (four users, a chat outage from 3 s to 5 s
// set through the fake LLM's /control/faults). Proves: every acknowledged message is
// stored once and every marker found through the API, the faults were injected, the
// daemon's own threshold is the one checked; a wrong token and a scenario with faults
// but no --fakellm are refused with exit 2 before anything runs; --no-faults runs
// without them and says so; a daemon killed in the middle fails the run with exit 1.
// The users play model tool loops over the turn route; an orphan tool row sent to the
// fake LLM by another client during the run fails it with exit 1 (orphan_tool_row).
#include <boost/test/unit_test.hpp>

#include <signal.h>

#include <chrono>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "tests/child_program.hpp"
#include "tests/temp_dir.hpp"

BOOST_AUTO_TEST_SUITE(soak_server_test)

using json = nlohmann::json;
using namespace std::chrono_literals;
using mneme::testing::child_program;
using args_list = std::vector<std::string>;

namespace {

const std::string scenario_file =
  std::string{MNEME_SOURCE_DIR} + "/tests/data/soak/server_short.yaml";
const std::string token = "soak-test-token";
constexpr int daemon_threshold_tokens = 2000;   // written into the daemon's config below; above
                                                 // what head + summary + tail of this mix hold

// A mneme-fakellm and a `mneme serve` whose model is that fake LLM, both on loopback.
struct daemon_rig {
  mneme::testing::temp_dir dir{"mneme-soak-server"};
  child_program fakellm;
  child_program daemon;
  std::string fakellm_url;
  std::string daemon_url;

  daemon_rig() {
    std::string seen;
    auto llm_port = mneme::testing::start_fakellm(fakellm, {"--log-level", "warn"}, seen,
                                                  dir.file("fakellm.err"));
    BOOST_REQUIRE_MESSAGE(llm_port > 0, "mneme-fakellm said: " + seen);
    fakellm_url = "http://127.0.0.1:" + std::to_string(llm_port);
    auto config = dir.file("mneme.yaml");
    std::ofstream{config} << "compression:\n"
                             "  threshold_tokens: " << daemon_threshold_tokens << "\n"
                             "  protect_last_n: 4\n"
                             // as in configs/soak/quick.yaml: short locks for a short run
                             "  anti_thrash_lock_seconds: 5\n"
                             "  summary_failure_cooldown_seconds: 5\n"
                             "model:\n"
                             "  base_url: " << fakellm_url << "\n"
                             "  timeout: 10\n"
                             "auxiliary:\n"
                             "  compression:\n"
                             "    timeout: 10\n"
                             "gateway:\n"
                             "  auth_token: " << token << "\n"
                             "logging:\n"
                             "  level: warn\n";
    seen.clear();
    auto port = mneme::testing::start_mneme_serve(
      daemon, {"--config", config, "--db", dir.file("mneme.db")}, seen, dir.file("serve.err"));
    BOOST_REQUIRE_MESSAGE(port > 0, "mneme serve said: " + seen);
    daemon_url = "http://127.0.0.1:" + std::to_string(port);
  }
};

struct soak_run {
  int exit_code = -1;
  std::string output;
  json report;   // null when no report.json was written
};

// `mneme soak ARGS --report DIR/report` (MNEME_BINARY_DIR/mneme), its stdout and stderr,
// report.json.
soak_run run_soak(args_list args, const mneme::testing::temp_dir& dir) {
  auto report = dir.file("report");
  args.insert(args.begin(), "soak");
  args.insert(args.end(), {"--report", report});
  auto ran = mneme::testing::run_program("mneme", args, mneme::testing::stderr_mode::merged);
  soak_run r;
  r.exit_code = ran.code;
  r.output = ran.out;
  std::ifstream in{report + "/report.json"};
  if (in)
    r.report = json::parse(in, nullptr, false);
  return r;
}

args_list server_args(const daemon_rig& rig) {
  return {"--server", rig.daemon_url, "--token", token, "--fakellm", rig.fakellm_url,
          "--scenario", scenario_file};
}

} // namespace

BOOST_AUTO_TEST_CASE(a_soak_against_a_running_daemon_loses_nothing_finds_every_marker_and_injects_the_faults) {
  daemon_rig rig;
  auto r = run_soak(server_args(rig), rig.dir);
  BOOST_TEST_MESSAGE(r.output);
  BOOST_TEST(r.exit_code == 0, r.output);
  BOOST_REQUIRE(r.report.is_object());
  auto& j = r.report;
  BOOST_TEST(j["messages_sent"].get<int64_t>() > 0);
  BOOST_TEST(j["messages_stored"].get<int64_t>() > 0);
  BOOST_TEST(j["lost_messages"].get<int64_t>() == 0);
  BOOST_TEST(j["duplicated_messages"].get<int64_t>() == 0);
  BOOST_TEST(j["markers_planted"].get<int64_t>() > 0);
  BOOST_TEST(j["unfindable_markers"].get<int64_t>() == 0);
  BOOST_TEST(j["violations"].empty(), j["violations"].dump());
  BOOST_TEST(j["faults"]["injected"].get<int64_t>() > 0);
  BOOST_TEST(j["faults"]["by_kind"]["unavailable"].get<int64_t>() > 0);
  BOOST_TEST(j["faults"]["set_by_runner"].get<bool>());
  // The daemon's own threshold is the one the live bound is derived from.
  BOOST_TEST(j["threshold_tokens"].get<int64_t>() == daemon_threshold_tokens);
  BOOST_TEST(j["live_bound"].get<int64_t>() > daemon_threshold_tokens);
  BOOST_TEST(j["compactions"]["total"].get<int64_t>() > 0);
  // The compaction log read back over GET /v1/sessions/{id}/compactions.
  BOOST_TEST(j["retention"]["attempts_logged"].get<int64_t>() > 0);
  BOOST_TEST(j["target"].get<std::string>().find(rig.daemon_url) != std::string::npos);
  // Model tool loops over POST .../turns: tools offered, results sent back, no orphan.
  BOOST_TEST(j["tool_loops"]["started"].get<int64_t>() > 0);
  BOOST_TEST(j["tool_loops"]["ended"] == j["tool_loops"]["started"]);
  BOOST_TEST(j["tool_loops"]["results"]["sent"].get<int64_t>() > 0);
  BOOST_TEST(j["tool_loops"]["results"]["lost"] == 0);
  BOOST_TEST(j["tool_loops"]["pairing"]["audited"] == true);
  BOOST_TEST(j["tool_loops"]["pairing"]["orphan_calls"] == 0);
  BOOST_TEST(rig.daemon.stop() == 0);
}

BOOST_AUTO_TEST_CASE(an_orphan_tool_row_reaching_the_fake_llm_fails_the_run_with_exit_1) {
  daemon_rig rig;
  auto running = std::async(std::launch::async,
                            [&] { return run_soak(server_args(rig), rig.dir); });
  std::this_thread::sleep_for(2500ms);
  // A client other than mneme sends the fake LLM a result whose call is not in the
  // request: the fake counts it, the runner's check must see it.
  httplib::Client llm{rig.fakellm_url};
  json orphan = {{"model", "gpt-test"},
                 {"messages", json::array({{{"role", "user"}, {"content", "q"}},
                                           {{"role", "tool"}, {"tool_call_id", "ghost"},
                                            {"content", "a result nobody asked for"}}})}};
  auto res = llm.Post("/v1/chat/completions", orphan.dump(), "application/json");
  BOOST_TEST(static_cast<bool>(res));
  auto r = running.get();
  BOOST_TEST(r.exit_code == 1, r.output);
  BOOST_REQUIRE(r.report.is_object());
  bool named = false;
  for (const auto& v : r.report["violations"])
    named = named || v["invariant"] == "orphan_tool_row";
  BOOST_TEST(named, r.report["violations"].dump());
  BOOST_TEST(r.report["tool_loops"]["pairing"]["orphan_results"] == 1);
  BOOST_TEST(rig.daemon.stop() == 0);
}

BOOST_AUTO_TEST_CASE(a_wrong_token_is_refused_before_the_run_with_exit_2) {
  daemon_rig rig;
  auto r = run_soak({"--server", rig.daemon_url, "--token", "wrong", "--fakellm",
                     rig.fakellm_url, "--scenario", scenario_file},
                    rig.dir);
  BOOST_TEST(r.exit_code == 2, r.output);
  BOOST_TEST(r.output.find("HTTP 401") != std::string::npos, r.output);
  BOOST_TEST(r.output.find("--token") != std::string::npos, r.output);
  BOOST_TEST(r.report.is_null());
}

BOOST_AUTO_TEST_CASE(a_server_list_with_an_empty_bad_or_repeated_url_is_refused_with_exit_2) {
  mneme::testing::temp_dir dir{"mneme-soak-urls"};
  const std::string a = "http://127.0.0.1:1";
  const std::pair<std::string, std::string> cases[] = {
    {a + ",," + "http://127.0.0.1:2", "an empty URL"},
    {a + ",", "an empty URL"},
    {"127.0.0.1:8080", "'127.0.0.1:8080' is not an http://HOST:PORT URL"},
    {a + ",https://x:1", "'https://x:1' is not an http://HOST:PORT URL"},
    {a + "," + a, "names " + a + " twice"},
  };
  for (const auto& [list, said] : cases) {
    auto r = run_soak({"--server", list, "--no-faults", "--scenario", scenario_file}, dir);
    BOOST_TEST(r.exit_code == 2, list << ": " << r.output);
    BOOST_TEST(r.output.find(said) != std::string::npos, list << ": " << r.output);
    BOOST_TEST(r.report.is_null());
  }
}

BOOST_AUTO_TEST_CASE(a_scenario_with_faults_needs_fakellm_or_no_faults) {
  daemon_rig rig;
  auto refused = run_soak({"--server", rig.daemon_url, "--token", token, "--scenario",
                           scenario_file},
                          rig.dir);
  BOOST_TEST(refused.exit_code == 2, refused.output);
  BOOST_TEST(refused.output.find("--fakellm URL") != std::string::npos, refused.output);
  BOOST_TEST(refused.output.find("--no-faults") != std::string::npos, refused.output);

  auto without = run_soak({"--server", rig.daemon_url, "--token", token, "--no-faults",
                           "--duration", "3", "--scenario", scenario_file},
                          rig.dir);
  BOOST_TEST(without.exit_code == 0, without.output);
  BOOST_REQUIRE(without.report.is_object());
  BOOST_TEST(without.report["faults"]["set_by_runner"].get<bool>() == false);
  BOOST_TEST(without.report["faults"]["injected"].get<int64_t>() == 0);
  BOOST_TEST(without.report["lost_messages"].get<int64_t>() == 0);
  BOOST_TEST(without.report["notes"].dump().find("--no-faults") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_daemon_killed_in_the_middle_fails_the_run_with_exit_1) {
  daemon_rig rig;
  auto running = std::async(std::launch::async,
                            [&] { return run_soak(server_args(rig), rig.dir); });
  std::this_thread::sleep_for(2500ms);
  BOOST_TEST(rig.daemon.stop(SIGKILL) == 128 + SIGKILL);
  auto r = running.get();
  BOOST_TEST(r.exit_code == 1, r.output);
  BOOST_TEST(r.output.find("stopped answering") != std::string::npos, r.output);
  BOOST_REQUIRE(r.report.is_object());
  bool named = false;
  for (const auto& v : r.report["violations"])
    named = named || v["invariant"] == "target_down";
  BOOST_TEST(named, r.report["violations"].dump());
}

BOOST_AUTO_TEST_SUITE_END() // soak_server_test
