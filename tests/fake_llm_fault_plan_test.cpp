// Tests of the fake LLM's pure fault decision (apps/common/fakellm/fault_plan) and
// of scenario parsing (scenario.hpp): targeting by fraction, model, purpose, time
// window, prompt size and count; latency and jitter; determinism for a seed;
// strict YAML/JSON validation with key paths; the shipped example scenario.
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <set>

#include <nlohmann/json.hpp>

#include "apps/common/fakellm/fault_plan.hpp"
#include "apps/common/fakellm/scenario.hpp"
#include "caf/all.hpp"
#include "messages/errc.hpp"
#include "tests/store_test_util.hpp"

BOOST_AUTO_TEST_SUITE(fake_llm_fault_plan_test)

using namespace mneme::fakellm;
using mneme::testing::err_of;
namespace data = boost::unit_test::data;

namespace {

fault_rule rule_of(fault_kind k) {
  fault_rule r;
  r.kind = k;
  if (k == fault_kind::latency) r.latency_ms = 100;
  if (k == fault_kind::refuse) r.end_s = 10;
  return r;
}

request_facts facts(uint64_t seq, std::string_view model = "gpt-4o", bool summary = false,
                    double elapsed = 0) {
  request_facts f;
  f.seq = seq;
  f.model = model;
  f.is_summary = summary;
  f.elapsed_s = elapsed;
  f.body_bytes = 100;
  f.prompt_tokens = 1000;
  return f;
}

std::vector<bool> selection(const fault_plan& plan, int n) {
  std::vector<bool> out;
  for (int i = 0; i < n; ++i) out.push_back(decide(plan, facts(i), {}).answer.has_value());
  return out;
}

} // namespace

BOOST_AUTO_TEST_CASE(every_kind_has_a_name_that_parses_back) {
  for (int k = 0; k < fault_kind_count; ++k) {
    auto kind = static_cast<fault_kind>(k);
    BOOST_TEST((parse_fault_kind(to_string(kind)) == kind));
  }
  BOOST_TEST(!parse_fault_kind("outage").has_value());
}

BOOST_AUTO_TEST_CASE(an_empty_plan_injects_nothing) {
  auto d = decide(fault_plan{}, facts(0), {});
  BOOST_TEST(!d.answer.has_value());
  BOOST_TEST(d.delay_ms == 0);
}

BOOST_DATA_TEST_CASE(a_fraction_selects_about_that_share_of_requests,
                     data::make({0.0, 0.1, 0.25, 0.5, 0.9, 1.0}), fraction) {
  fault_plan plan;
  plan.seed = 7;
  plan.rules.push_back(rule_of(fault_kind::unavailable));
  plan.rules[0].fraction = fraction;
  auto sel = selection(plan, 10000);
  auto hits = std::count(sel.begin(), sel.end(), true);
  BOOST_TEST(std::abs(hits / 10000.0 - fraction) < 0.02);
}

BOOST_AUTO_TEST_CASE(the_same_seed_selects_the_same_requests_and_another_seed_others) {
  fault_plan plan;
  plan.seed = 42;
  plan.rules.push_back(rule_of(fault_kind::reset));
  plan.rules[0].fraction = 0.3;
  auto first = selection(plan, 500);
  BOOST_TEST(first == selection(plan, 500));
  plan.seed = 43;
  BOOST_TEST(first != selection(plan, 500));
}

BOOST_DATA_TEST_CASE(a_model_target_matches_by_substring,
                     data::make({"gpt-4o", "my-gpt", "claude-3", "GPT-4"}) ^
                         data::make({true, true, false, false}),
                     model, hit) {
  fault_plan plan;
  plan.rules.push_back(rule_of(fault_kind::overflow_400));
  plan.rules[0].model = "gpt";
  BOOST_TEST(decide(plan, facts(0, model), {}).answer.has_value() == hit);
}

BOOST_DATA_TEST_CASE(a_purpose_target_separates_summaries_from_chat,
                     data::make({purpose_filter::any, purpose_filter::any, purpose_filter::chat,
                                 purpose_filter::chat, purpose_filter::summary,
                                 purpose_filter::summary}) ^
                         data::make({false, true, false, true, false, true}) ^
                         data::make({true, true, true, false, false, true}),
                     purpose, is_summary, hit) {
  fault_plan plan;
  plan.rules.push_back(rule_of(fault_kind::unavailable));
  plan.rules[0].purpose = purpose;
  BOOST_TEST(decide(plan, facts(0, "m", is_summary), {}).answer.has_value() == hit);
}

BOOST_DATA_TEST_CASE(a_time_window_is_closed_at_start_and_open_at_end,
                     data::make({0.0, 9.999, 10.0, 15.0, 19.999, 20.0, 100.0}) ^
                         data::make({false, false, true, true, true, false, false}),
                     elapsed, hit) {
  fault_plan plan;
  plan.rules.push_back(rule_of(fault_kind::silence));
  plan.rules[0].start_s = 10;
  plan.rules[0].end_s = 20;
  BOOST_TEST(decide(plan, facts(0, "m", false, elapsed), {}).answer.has_value() == hit);
}

BOOST_AUTO_TEST_CASE(a_window_without_end_stays_open) {
  fault_plan plan;
  plan.rules.push_back(rule_of(fault_kind::silence));
  plan.rules[0].start_s = 5;
  BOOST_TEST(!decide(plan, facts(0, "m", false, 4.9), {}).answer.has_value());
  BOOST_TEST(decide(plan, facts(0, "m", false, 1e6), {}).answer.has_value());
}

BOOST_AUTO_TEST_CASE(max_count_stops_a_rule_after_that_many_injections) {
  fault_plan plan;
  plan.rules.push_back(rule_of(fault_kind::unavailable));
  plan.rules[0].max_count = 2;
  BOOST_TEST(decide(plan, facts(0), {1}).answer.has_value());
  BOOST_TEST(!decide(plan, facts(1), {2}).answer.has_value());
}

BOOST_DATA_TEST_CASE(payload_too_large_applies_only_above_its_size,
                     data::make({999, 1000, 1001}) ^ data::make({false, false, true}), bytes,
                     hit) {
  fault_plan plan;
  plan.rules.push_back(rule_of(fault_kind::payload_too_large));
  plan.rules[0].max_body_bytes = 1000;
  auto f = facts(0);
  f.body_bytes = bytes;
  BOOST_TEST(decide(plan, f, {}).answer.has_value() == hit);
}

BOOST_AUTO_TEST_CASE(min_prompt_tokens_targets_long_prompts_only) {
  fault_plan plan;
  plan.rules.push_back(rule_of(fault_kind::long_context_429));
  plan.rules[0].min_prompt_tokens = 150000;
  auto f = facts(0);
  f.prompt_tokens = 149999;
  BOOST_TEST(!decide(plan, f, {}).answer.has_value());
  f.prompt_tokens = 150000;
  BOOST_TEST((decide(plan, f, {}).answer == fault_kind::long_context_429));
}

BOOST_AUTO_TEST_CASE(the_first_matching_answer_rule_wins_and_latency_adds_up) {
  fault_plan plan;
  plan.rules.push_back(rule_of(fault_kind::latency));     // 100 ms
  plan.rules.push_back(rule_of(fault_kind::empty_content));
  plan.rules.push_back(rule_of(fault_kind::latency));     // 100 ms more
  plan.rules.push_back(rule_of(fault_kind::unavailable));
  auto d = decide(plan, facts(0), {});
  BOOST_TEST((d.answer == fault_kind::empty_content));
  BOOST_TEST(d.answer_rule == 1);
  BOOST_TEST(d.delay_ms == 200);
  BOOST_TEST(d.latency_rules == (std::vector<int>{0, 2}));
}

BOOST_AUTO_TEST_CASE(jitter_stays_within_its_bound_is_deterministic_and_varies) {
  fault_plan plan;
  plan.seed = 9;
  plan.rules.push_back(rule_of(fault_kind::latency));
  plan.rules[0].latency_ms = 500;
  plan.rules[0].jitter_ms = 100;
  std::set<int64_t> seen;
  for (uint64_t i = 0; i < 2000; ++i) {
    auto d = decide(plan, facts(i), {});
    BOOST_TEST_REQUIRE(d.delay_ms >= 500);
    BOOST_TEST_REQUIRE(d.delay_ms <= 600);
    BOOST_TEST_REQUIRE(d.delay_ms == decide(plan, facts(i), {}).delay_ms);
    seen.insert(d.delay_ms);
  }
  BOOST_TEST(seen.count(500) == 1u);
  BOOST_TEST(seen.count(600) == 1u);
  BOOST_TEST(seen.size() > 90u);
}

BOOST_DATA_TEST_CASE(refuse_closes_the_listener_only_inside_its_window,
                     data::make({0.0, 1.0, 2.5, 3.0}) ^ data::make({false, true, true, false}),
                     elapsed, refused) {
  fault_plan plan;
  plan.rules.push_back(rule_of(fault_kind::refuse));
  plan.rules[0].start_s = 1;
  plan.rules[0].end_s = 3;
  BOOST_TEST(listener_refused(plan, elapsed) == refused);
  // refuse acts on the listener, never as a per-request answer
  BOOST_TEST(!decide(plan, facts(0, "m", false, elapsed), {}).answer.has_value());
}

BOOST_AUTO_TEST_CASE(invalid_rules_are_explained) {
  std::vector<std::pair<fault_rule, std::string>> table;
  auto r = rule_of(fault_kind::unavailable);
  r.fraction = 1.5;
  table.emplace_back(r, "fraction");
  r = rule_of(fault_kind::unavailable);
  r.start_s = 5;
  r.end_s = 5;
  table.emplace_back(r, "end_s");
  r = rule_of(fault_kind::latency);
  r.latency_ms = 0;
  table.emplace_back(r, "latency_ms");
  r = rule_of(fault_kind::refuse);
  r.end_s.reset();
  table.emplace_back(r, "end_s");
  r = rule_of(fault_kind::refuse);
  r.model = "gpt";
  table.emplace_back(r, "only start_s and end_s");
  r = rule_of(fault_kind::unavailable);
  r.max_count = -1;
  table.emplace_back(r, "max_count");
  for (const auto& [rule, needle] : table) {
    auto why = validate(rule);
    BOOST_TEST_INFO("rule " << to_string(rule.kind) << " -> '" << why << "'");
    BOOST_TEST(why.find(needle) != std::string::npos);
  }
  BOOST_TEST(validate(rule_of(fault_kind::trickle)).empty());
}

// --- scenarios

BOOST_AUTO_TEST_CASE(a_yaml_scenario_fills_every_field) {
  auto s = parse_scenario_yaml(R"(
seed: 5
window_tokens: 1000
answer_tokens: 8
faults:
  - kind: latency
    latency_ms: 50
    jitter_ms: 10
    purpose: summary
  - kind: unavailable
    fraction: 0.5
    model: "gpt"
    start_s: 1.5
    end_s: 3
    max_count: 4
    min_prompt_tokens: 10
  - kind: trickle
    silence_ms: 700
  - kind: payload_too_large
    max_body_bytes: 1234
)");
  BOOST_TEST_REQUIRE(static_cast<bool>(s), err_of(s));
  BOOST_TEST(s->plan.seed == 5u);
  BOOST_TEST(*s->window_tokens == 1000);
  BOOST_TEST(*s->answer_tokens == 8);
  BOOST_TEST_REQUIRE(s->plan.rules.size() == 4u);
  const auto& lat = s->plan.rules[0];
  BOOST_TEST((lat.latency_ms == 50 && lat.jitter_ms == 10 && lat.purpose == purpose_filter::summary));
  const auto& un = s->plan.rules[1];
  BOOST_TEST(un.fraction == 0.5);
  BOOST_TEST(un.model == "gpt");
  BOOST_TEST(un.start_s == 1.5);
  BOOST_TEST(*un.end_s == 3.0);
  BOOST_TEST(un.max_count == 4);
  BOOST_TEST(un.min_prompt_tokens == 10);
  BOOST_TEST(s->plan.rules[2].silence_ms == 700);
  BOOST_TEST(s->plan.rules[3].max_body_bytes == 1234);
}

BOOST_AUTO_TEST_CASE(a_scenario_round_trips_through_json) {
  auto s = parse_scenario_yaml("seed: 3\nfaults:\n  - kind: reset\n    fraction: 0.25\n"
                               "    purpose: chat\n  - kind: refuse\n    start_s: 2\n    end_s: 4\n");
  BOOST_TEST_REQUIRE(static_cast<bool>(s));
  auto again = parse_scenario(to_json(*s));
  BOOST_TEST_REQUIRE(static_cast<bool>(again));
  BOOST_TEST(to_json(*again) == to_json(*s));
  BOOST_TEST((again->plan.rules[0].purpose == purpose_filter::chat));
  BOOST_TEST(*again->plan.rules[1].end_s == 4.0);
}

BOOST_DATA_TEST_CASE(bad_scenarios_are_rejected_with_the_key_path,
                     data::make({std::string("seed: -1"),
                                 std::string("window_tokens: 0"),
                                 std::string("colour: blue"),
                                 std::string("faults: 3"),
                                 std::string("faults:\n  - fraction: 0.5"),
                                 std::string("faults:\n  - kind: teapot"),
                                 std::string("faults:\n  - kind: reset\n    fraction: lots"),
                                 std::string("faults:\n  - kind: reset\n    speed: 3"),
                                 std::string("faults:\n  - kind: reset\n  - kind: latency"),
                                 std::string("faults: [unclosed")}) ^
                         data::make({"scenario.seed", "scenario.window_tokens", "scenario.colour",
                                     "scenario.faults", "scenario.faults[0].kind",
                                     "scenario.faults[0].kind", "scenario.faults[0].fraction",
                                     "scenario.faults[0].speed", "scenario.faults[1]",
                                     "not valid YAML"}),
                     yaml, path) {
  auto s = parse_scenario_yaml(yaml);
  BOOST_TEST_REQUIRE(!s);
  BOOST_TEST((s.error() == mneme::errc::config_invalid));
  auto text = mneme::render_error(s.error());
  BOOST_TEST_INFO(text);
  BOOST_TEST(text.find(path) != std::string::npos);
}

BOOST_AUTO_TEST_CASE(invalid_json_scenarios_are_rejected) {
  BOOST_TEST(!parse_scenario_json("{not json"));
  BOOST_TEST(!parse_scenario_json("[1,2]"));
  BOOST_TEST(static_cast<bool>(parse_scenario_json(R"({"faults":[]})")));
}

BOOST_AUTO_TEST_CASE(the_example_scenario_loads_and_schedules_an_outage) {
  auto s = load_scenario_file(std::string(MNEME_SOURCE_DIR) + "/configs/fakellm/example.yaml");
  BOOST_TEST_REQUIRE(static_cast<bool>(s), err_of(s));
  BOOST_TEST(s->plan.rules.size() >= 5u);
  BOOST_TEST(!listener_refused(s->plan, 59.9));
  BOOST_TEST(listener_refused(s->plan, 60.0));
  BOOST_TEST(!listener_refused(s->plan, 90.0));
}

BOOST_AUTO_TEST_CASE(a_missing_scenario_file_names_the_file) {
  auto s = load_scenario_file("/nonexistent/scenario.yaml");
  BOOST_TEST_REQUIRE(!s);
  BOOST_TEST(mneme::render_error(s.error()).find("/nonexistent/scenario.yaml") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END() // fake_llm_fault_plan_test
