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

BOOST_AUTO_TEST_SUITE_END() // soak_report_test
