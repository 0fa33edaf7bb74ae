// Unit tests of how a soak run writes turn-latency figures that may be missing
// (apps/common/soak/soak_figures, soak_report): when no turn succeeded the progress line
// prints "p99 -", report.json keeps its latency keys with null values and report.md
// prints "-"; when turns succeeded the figures are the nearest-rank percentiles.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "apps/common/soak/soak_figures.hpp"
#include "apps/common/soak/soak_report.hpp"
#include "tests/store_test_util.hpp"

BOOST_AUTO_TEST_SUITE(soak_report_test)

namespace bdata = boost::unit_test::data;
using json = nlohmann::json;
using namespace mneme::soak;

namespace {

struct p99_case {
  const char* what;
  std::vector<double> latencies_ms;
  const char* expected;
};
std::ostream& operator<<(std::ostream& os, const p99_case& c) { return os << c.what; }

std::vector<double> one_to(int n) {
  std::vector<double> out;
  for (int i = 1; i <= n; ++i)
    out.push_back(i);
  return out;
}

const p99_case p99_cases[] = {
  {"no successful turn in the window", {}, "p99 -"},
  {"one turn", {120.4}, "p99 120 ms"},
  {"a real sub-millisecond figure is not missing", {0.3}, "p99 0 ms"},
  {"200 turns: the 198th value by nearest rank", one_to(200), "p99 198 ms"},
  {"rounded to whole ms", {10, 20, 30.6}, "p99 31 ms"},
};

// A result of `turns` (ok or failed, latency ms) over a default scenario.
struct result_fixture {
  soak_scenario scenario;
  soak_result result;
  result_fixture() {
    scenario.name = "figures";
    result.scenario = &scenario;
    result.drive_s = 10;
  }
  void turns(const std::vector<std::pair<bool, float>>& ts) {
    float t = 0;
    for (auto [ok, ms] : ts)
      result.turns.push_back({t += 0.5f, ms, ok});
  }
};

const char* const latency_keys[] = {"p50", "p90", "p99", "max"};

} // namespace

BOOST_DATA_TEST_CASE(the_progress_line_prints_p99_or_a_dash_when_nothing_succeeded,
                     bdata::make(p99_cases), c) {
  BOOST_TEST(progress_p99(c.latencies_ms) == c.expected);
}

BOOST_AUTO_TEST_CASE(a_latency_figure_is_rounded_to_a_tenth_or_null_when_absent) {
  BOOST_TEST(latency_figure(std::nullopt).is_null());
  BOOST_TEST(latency_figure(12.34).get<double>() == 12.3);
  BOOST_TEST(latency_figure(0.0).get<double>() == 0.0);
  BOOST_TEST(markdown_figure(json(nullptr)) == "-");
  BOOST_TEST(markdown_figure(json(12.3)) == "12.3");
  BOOST_TEST(markdown_figure(json(0.0)) == "0.0");
}

BOOST_FIXTURE_TEST_CASE(a_run_where_every_turn_failed_reports_null_latencies_under_the_same_keys,
                        result_fixture) {
  turns({{false, 30000}, {false, 5}, {false, 12}});
  auto j = report_json(result);
  BOOST_REQUIRE(j.contains("latency_ms"));
  BOOST_TEST(j["latency_ms"].size() == 4u);
  for (auto key : latency_keys)
    BOOST_TEST_CONTEXT(key) {
      BOOST_REQUIRE(j["latency_ms"].contains(key));
      BOOST_TEST(j["latency_ms"][key].is_null());
    }
}

BOOST_FIXTURE_TEST_CASE(only_successful_turns_make_the_latency_percentiles, result_fixture) {
  // Ten ok turns 10, 20, ..., 100 ms and a failed one that must not count.
  std::vector<std::pair<bool, float>> ts;
  for (int i = 1; i <= 10; ++i)
    ts.push_back({true, static_cast<float>(10 * i)});
  ts.push_back({false, 60000});
  turns(ts);
  auto lat = report_json(result)["latency_ms"];
  BOOST_TEST(lat["p50"].get<double>() == 50.0);
  BOOST_TEST(lat["p90"].get<double>() == 90.0);
  BOOST_TEST(lat["p99"].get<double>() == 100.0);
  BOOST_TEST(lat["max"].get<double>() == 100.0);
}

BOOST_FIXTURE_TEST_CASE(report_md_prints_dashes_for_missing_latencies, result_fixture) {
  turns({{false, 30000}, {false, 12}});
  mneme::testing::temp_dir dir{"mneme-soak-report"};
  std::string error;
  auto md_path = write_report(result, dir.path(), error);
  BOOST_REQUIRE_MESSAGE(!md_path.empty(), error);
  std::ifstream md(md_path);
  std::stringstream text;
  text << md.rdbuf();
  BOOST_TEST(text.str().find("| turn latency p50 / p90 / p99 / max (ms) | - / - / - / - |")
               != std::string::npos,
             text.str());
  std::ifstream js(dir.file("report.json"));
  auto j = json::parse(js);
  BOOST_TEST(j["latency_ms"]["p99"].is_null());
}

// Retention per compaction (issue 45): committed attempts by the mode that wrote the
// summary, the others by outcome; attempts without identifiers have no retention.
BOOST_FIXTURE_TEST_CASE(retention_is_reported_per_series_with_its_median, result_fixture) {
  result.retention = {{1.0, "summarizer", "committed", 10, 8},
                      {2.0, "summarizer", "committed", 4, 1},
                      {3.0, "summarizer", "retried", 5, 1},
                      {4.0, "fallback", "committed", 6, 3},
                      {5.0, "summarizer", "committed", 0, 0},
                      {6.0, "summarizer", "committed", 10, 10}};
  auto r = report_json(result)["retention"];
  BOOST_TEST(r["attempts_logged"] == 6);
  BOOST_TEST(r["with_identifiers"] == 5);
  const auto& by = r["by_series"];
  BOOST_REQUIRE(by.contains("summarizer"));
  BOOST_TEST(by["summarizer"]["attempts"] == 3);
  BOOST_TEST(by["summarizer"]["identifiers_in"] == 24);
  BOOST_TEST(by["summarizer"]["identifiers_kept"] == 19);
  BOOST_TEST(by["summarizer"]["median"].get<double>() == 0.8);  // of 0.25, 0.8, 1.0
  BOOST_TEST(by["summarizer"]["p10"].get<double>() == 0.25);
  BOOST_TEST(by["retried"]["attempts"] == 1);
  BOOST_TEST(by["retried"]["median"].get<double>() == 0.2);
  BOOST_TEST(by["fallback"]["median"].get<double>() == 0.5);
  BOOST_TEST(by.size() == 3u);

  mneme::testing::temp_dir dir{"mneme-soak-retention"};
  std::string error;
  auto md_path = write_report(result, dir.path(), error);
  BOOST_REQUIRE_MESSAGE(!md_path.empty(), error);
  std::ifstream md(md_path);
  std::string text{std::istreambuf_iterator<char>(md), {}};
  BOOST_TEST(text.find("| identifiers kept by the summaries (kept / in per attempt) | fallback "
                       "median 0.5 over 1, retried median 0.2 over 1, summarizer median 0.8 "
                       "over 3 |") != std::string::npos, text);
  // retention.dat: one gnuplot block per series in the same order, one line per attempt.
  std::ifstream dat(dir.file("retention.dat"));
  std::string data{std::istreambuf_iterator<char>(dat), {}};
  BOOST_TEST(data.find("# fallback\n4.0 0.500 6 3\n\n\n# retried\n3.0 0.200 5 1\n\n\n"
                       "# summarizer\n1.0 0.800 10 8\n2.0 0.250 4 1\n6.0 1.000 10 10\n")
               != std::string::npos, data);
  std::ifstream gp(dir.file("retention.gp"));
  std::string script{std::istreambuf_iterator<char>(gp), {}};
  BOOST_TEST(script.find("index 2 using 1:2 with points pt 7 title 'summarizer (3)'")
               != std::string::npos, script);
}

BOOST_FIXTURE_TEST_CASE(a_run_without_identifiers_says_so_instead_of_a_figure, result_fixture) {
  result.retention = {{1.0, "micro", "committed", 0, 0}};
  auto r = report_json(result)["retention"];
  BOOST_TEST(r["attempts_logged"] == 1);
  BOOST_TEST(r["with_identifiers"] == 0);
  BOOST_TEST(r["by_series"].empty());
  mneme::testing::temp_dir dir{"mneme-soak-retention-none"};
  std::string error;
  auto md_path = write_report(result, dir.path(), error);
  BOOST_REQUIRE_MESSAGE(!md_path.empty(), error);
  std::ifstream md(md_path);
  std::string text{std::istreambuf_iterator<char>(md), {}};
  BOOST_TEST(text.find("no compaction replaced rows holding identifiers") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END() // soak_report_test
