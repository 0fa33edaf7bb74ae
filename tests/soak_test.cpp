// Integration test of `mneme soak` (the program in MNEME_BINARY_DIR): the quick
// scenario, shortened, passes every invariant and writes the report with the figures
// the scenario promises (compactions, injected faults, a fallback compaction inside the
// summarizer outage; model tool loops ended by text and by the round cap, no orphan tool
// row at the fake LLM, tool rounds per turn and the loop p99); a scenario whose live bound cannot hold fails with exit 1 and
// names the violation in report.json; a bad scenario is refused with exit 2.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/child_program.hpp"
#include "tests/temp_dir.hpp"

BOOST_AUTO_TEST_SUITE(soak_test)

namespace fs = std::filesystem;
using json = nlohmann::json;
using mneme::testing::temp_dir;

namespace {

// Runs `mneme soak ARGS`; its output is stdout and stderr mixed.
mneme::testing::program_result run(std::vector<std::string> args) {
  args.insert(args.begin(), "soak");
  return mneme::testing::run_program("mneme", args, mneme::testing::stderr_mode::merged);
}

json read_json(const fs::path& p) {
  std::ifstream in(p);
  BOOST_REQUIRE_MESSAGE(in, "missing " << p);
  return json::parse(in);
}

} // namespace

BOOST_AUTO_TEST_CASE(the_quick_scenario_passes_and_reports_its_figures) {
  temp_dir dir{"mneme-soak-test-quick"};
  fs::path report = dir.file("report");
  // 45 s keeps the whole summarizer outage (20-40 s) inside the run.
  auto r = run({"--scenario", "quick", "--duration", "45", "--users", "120", "--db",
                dir.file("q.db"), "--report", report.string()});
  BOOST_TEST_MESSAGE(r.out);
  BOOST_TEST(r.code == 0);
  BOOST_TEST(r.out.find("report.md") != std::string::npos);
  auto j = read_json(report / "report.json");
  for (const char* key : {"messages_sent", "messages_stored", "lost_messages", "unfindable_markers",
                          "max_live_tokens", "compactions", "violations", "scenario",
                          "duration_s", "throughput_msgs_per_s", "latency_ms", "faults", "rss"})
    BOOST_TEST(j.contains(key), "report.json lacks " << key);
  BOOST_TEST(j["scenario"]["name"] == "quick");
  BOOST_TEST(j["messages_sent"].get<int64_t>() > 0);
  BOOST_TEST(j["messages_stored"].get<int64_t>() > 0);
  BOOST_TEST(j["lost_messages"].get<int64_t>() == 0);
  BOOST_TEST(j["unfindable_markers"].get<int64_t>() == 0);
  BOOST_TEST(j["markers_planted"].get<int64_t>() > 0);
  BOOST_TEST(j["violations"].empty());
  BOOST_TEST(j["compactions"]["total"].get<int64_t>() > 0);
  BOOST_TEST(j["compactions"]["fallback_in_outage"].get<int64_t>() > 0);
  BOOST_TEST(j["faults"]["injected"].get<int64_t>() > 0);
  BOOST_TEST(j["max_live_tokens"].get<int64_t>() <= j["live_bound"].get<int64_t>());
  // Model tool loops: every prose turn offers tools; loops end with text and with the
  // round cap (3 in the quick scenario), the fake LLM saw no orphan, every acknowledged
  // result is stored once.
  const auto& tl = j["tool_loops"];
  BOOST_TEST(tl["started"].get<int64_t>() > 0);
  BOOST_TEST(tl["ended"] == tl["started"]);
  BOOST_TEST(tl["by_end"]["text"].get<int64_t>() > 0);
  BOOST_TEST(tl["by_end"]["round_cap"].get<int64_t>() > 0);
  BOOST_TEST(tl["round_cap"] == 3);
  BOOST_TEST(tl["rounds_per_turn"]["loops_by_rounds"]["1"].get<int64_t>() > 0);
  BOOST_TEST(tl["rounds_per_turn"]["p99"].get<int64_t>() <= 3);
  BOOST_TEST(tl["rounds_per_turn"]["mean"].get<double>() > 0);
  BOOST_TEST(tl["loop_ms"]["p99"].get<double>() > 0);
  BOOST_TEST(tl["results"]["sent"].get<int64_t>() > 0);
  BOOST_TEST(tl["results"]["lost"] == 0);
  BOOST_TEST(tl["results"]["duplicated"] == 0);
  BOOST_TEST(tl["pairing"]["audited"] == true);
  BOOST_TEST(tl["pairing"]["orphan_calls"] == 0);
  BOOST_TEST(tl["pairing"]["orphan_results"] == 0);
  BOOST_TEST(fs::exists(report / "report.md"));
  std::ifstream md_in(report / "report.md");
  std::string md{std::istreambuf_iterator<char>(md_in), {}};
  for (const char* row : {"tool rounds per turn: mean / p99", "tool loop time p50 / p99",
                          "orphan tool calls / results at the fake LLM"})
    BOOST_TEST(md.find(row) != std::string::npos, "report.md lacks " << row);
  BOOST_TEST(fs::exists(report / "live_tokens.dat"));
  BOOST_TEST(fs::exists(report / "live_tokens.gp"));
  // Retention per compaction, read back from the compaction log.
  BOOST_TEST(j["retention"]["attempts_logged"].get<int64_t>() > 0);
  BOOST_TEST(j["retention"]["with_identifiers"].get<int64_t>() > 0);
  BOOST_TEST(md.find("identifiers kept by the summaries") != std::string::npos);
  BOOST_TEST(fs::exists(report / "retention.gp"));
}

BOOST_AUTO_TEST_CASE(an_impossible_live_bound_fails_the_run_naming_the_invariant) {
  temp_dir dir{"mneme-soak-test-bound"};
  auto scenario = dir.file("impossible.yaml");
  std::ofstream(scenario) << "name: impossible\nusers: 5\nduration_s: 4\n"
                             "think_ms: {min: 100, max: 300}\n"
                             "invariants: {max_live_tokens: 1, drain_s: 30}\n";
  fs::path report = dir.file("report");
  auto r = run({"--scenario", scenario, "--db", dir.file("i.db"), "--report", report.string()});
  BOOST_TEST_MESSAGE(r.out);
  BOOST_TEST(r.code == 1);
  BOOST_TEST(r.out.find("live_bound") != std::string::npos);
  auto j = read_json(report / "report.json");
  BOOST_REQUIRE(!j["violations"].empty());
  BOOST_TEST(j["violations"][0]["invariant"] == "live_bound");
  BOOST_TEST(j["violations"][0]["session"].get<std::string>().rfind("soak-", 0) == 0u);
  BOOST_TEST(j["passed"] == false);
}

BOOST_AUTO_TEST_CASE(a_bad_scenario_is_refused_with_exit_2_naming_the_key) {
  temp_dir dir{"mneme-soak-test-bad"};
  auto scenario = dir.file("bad.yaml");
  std::ofstream(scenario) << "users: 3\ninvariants: {max_live_tokenz: 5}\n";
  auto r = run({"--scenario", scenario, "--report", dir.file("r")});
  BOOST_TEST(r.code == 2);
  BOOST_TEST(r.out.find("invariants.max_live_tokenz: unknown key") != std::string::npos);
  auto unknown = run({"--scenario", "no-such-scenario"});
  BOOST_TEST(unknown.code == 2);
  BOOST_TEST(unknown.out.find("no scenario named 'no-such-scenario'") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END() // soak_test
