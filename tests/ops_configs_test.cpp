// The operator's files of configs/ checked against the code they describe:
//   - configs/prometheus/alerts.yml passes `promtool check rules` and its unit tests
//     (configs/prometheus/alerts_test.yml, `promtool test rules`: each alert fires on the
//     series it is meant for and not on a healthy neighbour); promtool is the Debian
//     package `prometheus`, which .ci/run installs: without it this test fails, it never
//     skips;
//   - configs/grafana/mneme.json parses as a dashboard whose every panel has a query, and
//     every mneme_* name in a panel's query or in an alert rule is one the daemon's
//     /metrics really renders: the list is read from the exporter in process (the HTTP
//     API of an in-process runtime, the same code `mneme serve` answers with), so a
//     renamed or removed family fails here instead of leaving an empty panel.
#include <boost/test/unit_test.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/common/api/http_server.hpp"
#include "tests/http_api_fixture.hpp"

BOOST_AUTO_TEST_SUITE(ops_configs_test)

namespace {

const std::string ops_source_dir = MNEME_SOURCE_DIR;

std::string ops_read_text(const std::string& path) {
  std::ifstream in{path};
  BOOST_REQUIRE_MESSAGE(in, "cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct shell_result {
  int code = -1;
  std::string out; // stdout and stderr
};

// Runs `command` through /bin/sh with stderr merged into stdout.
shell_result run_shell(const std::string& command) {
  shell_result r;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  BOOST_REQUIRE_MESSAGE(pipe != nullptr, "cannot run " + command);
  char chunk[4096];
  size_t got = 0;
  while ((got = std::fread(chunk, 1, sizeof chunk, pipe)) > 0)
    r.out.append(chunk, got);
  int status = ::pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// promtool's path; fails the test (never skips) when it is not installed.
std::string promtool() {
  auto found = run_shell("command -v promtool");
  std::string path = found.out.substr(0, found.out.find('\n'));
  BOOST_REQUIRE_MESSAGE(found.code == 0 && !path.empty(),
                        "promtool is not installed: install the Debian package `prometheus` "
                        "(apt-get install --no-install-recommends prometheus; .ci/run does)");
  return path;
}

// The sample names a /metrics exposition can hold: each "# TYPE" family, with _bucket,
// _sum and _count for a histogram.
std::set<std::string> exported_sample_names(const std::string& exposition) {
  std::set<std::string> names;
  std::istringstream in{exposition};
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# TYPE ", 0) != 0)
      continue;
    std::istringstream fields{line.substr(7)};
    std::string name;
    std::string type;
    fields >> name >> type;
    names.insert(name);
    if (type == "histogram" || type == "summary")
      for (const char* suffix : {"_bucket", "_sum", "_count"})
        names.insert(name + suffix);
  }
  return names;
}

// The mneme_* names of a PromQL expression (or any text), in text order.
std::vector<std::string> mneme_names_in(const std::string& text) {
  static const std::regex name_re{"\\bmneme_[a-zA-Z0-9_]+"};
  std::vector<std::string> names;
  for (std::sregex_iterator it{text.begin(), text.end(), name_re}, end; it != end; ++it)
    names.push_back(it->str());
  return names;
}

// The mneme_* names of `text` that `exported` lacks.
std::vector<std::string> unknown_mneme_names(const std::string& text,
                                             const std::set<std::string>& exported) {
  std::vector<std::string> unknown;
  for (auto& name : mneme_names_in(text))
    if (exported.count(name) == 0)
      unknown.push_back(name);
  return unknown;
}

// The in-process daemon's /metrics exposition, as `mneme serve` renders it.
struct metrics_source : mneme::test::http_api_fixture {
  // Every name a scrape renders. A supervisor busy past metrics_ask_timeout (a slow
  // sanitizer build starting its runtime) leaves its samples out of one scrape, so this
  // scrapes again, a bounded number of times, until they are in.
  std::set<std::string> names() {
    serve();
    std::set<std::string> names;
    std::string text;
    for (int scrape = 0; scrape < 20 && names.count("mneme_sessions_hosted") == 0; ++scrape) {
      auto m = get("/metrics");
      BOOST_REQUIRE_EQUAL(m.status, 200);
      text = m.text;
      names = exported_sample_names(text);
    }
    BOOST_REQUIRE_MESSAGE(names.count("mneme_turns_total") == 1, text);
    BOOST_REQUIRE_MESSAGE(names.count("mneme_sessions_hosted") == 1, text);
    return names;
  }
};

} // namespace

BOOST_AUTO_TEST_CASE(alert_rules_pass_promtool_check_and_their_unit_tests) {
  auto tool = promtool();
  auto rules = ops_source_dir + "/configs/prometheus/alerts.yml";
  auto checked = run_shell(tool + " check rules " + rules);
  BOOST_TEST(checked.code == 0, checked.out);
  BOOST_TEST(checked.out.find("SUCCESS: 6 rules found") != std::string::npos, checked.out);

  auto tested = run_shell("cd " + ops_source_dir + "/configs/prometheus && " + tool
                          + " test rules alerts_test.yml");
  BOOST_TEST(tested.code == 0, tested.out);
  BOOST_TEST(tested.out.find("SUCCESS") != std::string::npos, tested.out);

  // promtool really checks: a rule with a broken expression is refused.
  mneme::testing::temp_dir dir{"mneme-ops-configs"};
  std::ofstream{dir.file("bad.yml")} << "groups:\n  - name: bad\n    rules:\n"
                                        "      - alert: Broken\n"
                                        "        expr: rate(mneme_turns_total[5m] > 1\n";
  auto refused = run_shell(tool + " check rules " + dir.file("bad.yml"));
  BOOST_TEST(refused.code != 0, refused.out);
}

BOOST_FIXTURE_TEST_CASE(dashboard_and_alerts_name_only_metrics_the_exporter_renders,
                        metrics_source) {
  auto exported = names();
  // The check itself tells a made-up name from a real one, histogram suffixes included.
  BOOST_TEST(unknown_mneme_names("rate(mneme_made_up_total[5m])", exported).size() == 1u);
  BOOST_TEST(unknown_mneme_names("rate(mneme_turn_latency_seconds_bucket[5m])", exported).empty());

  auto text = ops_read_text(ops_source_dir + "/configs/grafana/mneme.json");
  auto dash = nlohmann::json::parse(text, nullptr, false);
  BOOST_REQUIRE_MESSAGE(!dash.is_discarded(), "configs/grafana/mneme.json is not JSON");
  BOOST_TEST(dash.value("uid", std::string{}) == "mneme-overview");
  BOOST_REQUIRE(dash["panels"].is_array());

  std::set<int> ids;
  std::set<std::string> used; // every mneme_* name the panels query
  int queried_panels = 0;
  for (const auto& p : dash["panels"]) {
    auto title = p.value("title", std::string{});
    BOOST_TEST(!title.empty());
    BOOST_TEST(ids.insert(p.value("id", 0)).second, "panel id repeats: " << title);
    const auto& pos = p["gridPos"];
    BOOST_TEST((pos.is_object() && pos.value("x", -1) >= 0
                && pos.value("x", 0) + pos.value("w", 0) <= 24 && pos.value("h", 0) > 0),
               "grid position of " << title);
    if (p.value("type", std::string{}) == "row")
      continue;
    BOOST_TEST(p["datasource"].value("uid", std::string{}) == "${datasource}", title);
    BOOST_REQUIRE_MESSAGE(p["targets"].is_array() && !p["targets"].empty(),
                          "panel without a query: " << title);
    ++queried_panels;
    for (const auto& t : p["targets"]) {
      auto expr = t.value("expr", std::string{});
      BOOST_TEST(expr.find("mneme_") != std::string::npos, title << ": " << expr);
      auto unknown = unknown_mneme_names(expr, exported);
      BOOST_TEST(unknown.empty(), title << ": " << expr << " names metrics /metrics does not render: "
                                        << (unknown.empty() ? "" : unknown.front()));
      for (auto& name : mneme_names_in(expr))
        used.insert(name);
    }
  }
  BOOST_TEST(queried_panels >= 20);
  // What the dashboard is for: each topic of the operator's view has its panel.
  for (const char* family :
       {"mneme_sessions_hosted", "mneme_turns_total", "mneme_turn_latency_seconds_bucket",
        "mneme_compactions_total", "mneme_summary_failures_total",
        "mneme_summarizer_auth_failures_total", "mneme_cooldowns_active",
        "mneme_anti_thrash_locks_active", "mneme_index_backlog_rows", "mneme_wal_pages",
        "mneme_append_failures_total", "mneme_exhaustion_resets_total"})
    BOOST_TEST(used.count(family) == 1u, "the dashboard does not show " << family);

  auto alerts = ops_read_text(ops_source_dir + "/configs/prometheus/alerts.yml");
  auto unknown = unknown_mneme_names(alerts, exported);
  BOOST_TEST(unknown.empty(), "alerts.yml names metrics /metrics does not render: "
                                << (unknown.empty() ? "" : unknown.front()));
}

BOOST_AUTO_TEST_SUITE_END() // ops_configs_test
