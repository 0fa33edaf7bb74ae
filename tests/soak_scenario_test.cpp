// Tests of soak scenario reading (apps/common/soak/soak_scenario) and of the simulated
// users' messages (soak_text): strictness with the key's path, the shipped scenarios
// load, tags and markers are unique and found again.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <set>
#include <string>

#include "apps/common/soak/soak_scenario.hpp"
#include "apps/common/soak/soak_text.hpp"
#include "messages/errc.hpp"

BOOST_AUTO_TEST_SUITE(soak_scenario_test)

namespace bdata = boost::unit_test::data;
using namespace mneme;
using namespace mneme::soak;

namespace {

struct bad_case {
  std::string yaml;
  std::string expected;   // a piece of the error message
};
std::ostream& operator<<(std::ostream& os, const bad_case& c) { return os << c.expected; }

const bad_case bad_cases[] = {
  {"userz: 3\n", "userz: unknown key"},
  {"users: 0\n", "users: 0 is outside 1..100000"},
  {"users: many\n", "users: \"many\" is not an integer"},
  {"duration_s: -5\n", "duration_s: -5 is outside 1.."},
  {"think_ms: {min: 900, max: 100}\n", "think_ms: min 900 is above max 100"},
  {"think_ms: {min: 1, mx: 2}\n", "think_ms.mx: unknown key"},
  {"mix: {chinese_share: 1.5}\n", "mix.chinese_share: 1.5 is outside 0..1"},
  {"mix: {tool_small_share: 0.7, tool_large_share: 0.6}\n",
   "mix: tool_small_share + tool_large_share is above 1"},
  {"mix: {colour: red}\n", "mix.colour: unknown key"},
  {"invariants: {max_live_tokens: x}\n", "invariants.max_live_tokens: \"x\" is not an integer"},
  {"invariants: {require_fallback_in_outage: yes}\n",
   "invariants.require_fallback_in_outage"},
  {"invariants: {rss: 1}\n", "invariants.rss: unknown key"},
  {"fake_llm: {faults: [{kind: meteor}]}\n", "unknown fault kind 'meteor'"},
  {"fake_llm: {faults: [{kind: unavailable, purpose: chit}]}\n", "purpose"},
  {"config: 3\n", "config: must be a mapping"},
  {"- a\n- b\n", "a scenario is a mapping"},
};

} // namespace

BOOST_DATA_TEST_CASE(a_bad_scenario_is_rejected_naming_the_key, bdata::make(bad_cases), c) {
  auto s = parse_soak_scenario(c.yaml, "t.yaml");
  BOOST_REQUIRE(!s);
  auto text = render_error(s.error());
  BOOST_TEST_INFO(text);
  BOOST_TEST(text.find(c.expected) != std::string::npos);
  BOOST_TEST(s.error().code() == static_cast<uint8_t>(errc::config_invalid));
}

BOOST_AUTO_TEST_CASE(every_problem_of_a_scenario_is_reported_at_once) {
  auto s = parse_soak_scenario("users: 0\nbogus: 1\nmix: {marker_every: -1}\n", "t.yaml");
  BOOST_REQUIRE(!s);
  auto text = render_error(s.error());
  BOOST_TEST(text.find("users:") != std::string::npos);
  BOOST_TEST(text.find("bogus: unknown key") != std::string::npos);
  BOOST_TEST(text.find("mix.marker_every") != std::string::npos);
}

// live_bound_factor decided the live bound before the window guard; older scenario
// files that still name it load, with a warning naming the key and what replaced it.
BOOST_AUTO_TEST_CASE(the_retired_live_bound_factor_loads_with_a_deprecation_warning) {
  auto s = parse_soak_scenario("invariants: {live_bound_factor: 2.0, max_live_tokens: 9000}\n",
                               "old.yaml");
  BOOST_REQUIRE(s);
  BOOST_TEST(s->invariants.max_live_tokens == 9000);
  BOOST_REQUIRE_EQUAL(s->warnings.size(), 1u);
  BOOST_TEST(s->warnings[0].find("invariants.live_bound_factor") == 0u);
  BOOST_TEST(s->warnings[0].find("max_live_tokens") != std::string::npos);
  auto typo = parse_soak_scenario("invariants: {live_bound_factr: 2.0}\n", "old.yaml");
  BOOST_TEST(!typo); // only the retired key is tolerated; the loader stays strict
}

BOOST_AUTO_TEST_CASE(an_empty_mapping_gives_the_documented_defaults) {
  auto s = parse_soak_scenario("{}", "configs/soak/mine.yaml");
  BOOST_REQUIRE(s);
  BOOST_TEST(s->name == "mine");
  BOOST_TEST(s->users == 300);
  BOOST_TEST(s->duration_s == 60);
  BOOST_TEST(s->invariants.max_live_tokens == 0);
  BOOST_TEST(s->warnings.empty());
  BOOST_TEST(s->invariants.max_compactions_per_hour == 240);
  BOOST_TEST(s->invariants.rss_max_growth == 0.25);
  BOOST_TEST(s->mix.marker_every == 4);
}

BOOST_AUTO_TEST_CASE(fault_windows_map_onto_the_fake_llm_rules) {
  auto s = parse_soak_scenario(
    "fake_llm:\n  faults:\n"
    "    - {kind: latency, latency_ms: 5}\n"
    "    - {kind: unavailable, purpose: summary, start_s: 20, end_s: 40}\n"
    "    - {kind: unavailable, purpose: chat, fraction: 0.1}\n",
    "t.yaml");
  BOOST_REQUIRE(s);
  BOOST_TEST(s->fake_llm.plan.rules.size() == 3u);
  auto w = outage_windows(*s);
  BOOST_REQUIRE(w.size() == 1u);   // latency and open-ended rules have no window
  BOOST_TEST(w[0].from_s == 20);
  BOOST_TEST(w[0].to_s == 40);
  BOOST_TEST(w[0].purpose == "summary");
}

BOOST_DATA_TEST_CASE(the_shipped_scenarios_load,
                     bdata::make({"quick", "outage", "flaky", "long"}), name) {
  auto path = std::string{MNEME_SOURCE_DIR} + "/configs/soak/" + name + ".yaml";
  auto s = load_soak_scenario(path);
  BOOST_TEST_INFO(path);
  BOOST_REQUIRE_MESSAGE(s, (s ? "" : render_error(s.error())));
  BOOST_TEST(s->name == name);
  BOOST_TEST(!outage_windows(*s).empty());
}

BOOST_AUTO_TEST_CASE(the_flaky_scenario_injects_every_fault_kind_the_fake_supports) {
  auto s = load_soak_scenario(std::string{MNEME_SOURCE_DIR} + "/configs/soak/flaky.yaml");
  BOOST_REQUIRE(s);
  std::set<fakellm::fault_kind> kinds;
  for (const auto& r : s->fake_llm.plan.rules)
    kinds.insert(r.kind);
  BOOST_TEST(kinds.size() == static_cast<size_t>(fakellm::fault_kind_count));
}

BOOST_AUTO_TEST_CASE(tags_are_unique_and_found_again_at_the_start_of_a_message) {
  message_mix mix;
  mix.tool_small_share = 0.3;
  mix.tool_large_share = 0.1;
  mix.tool_large_kb = {20, 21};
  std::set<std::string> tags;
  for (int64_t user : {0, 1, 12}) {
    auto rng = user_rng(7, user);
    for (int64_t seq = 0; seq < 40; ++seq) {
      auto m = plan_message(mix, user, seq, rng);
      BOOST_TEST(tags.insert(m.tag).second);
      auto found = tag_of(m.content);
      BOOST_REQUIRE(found);
      BOOST_TEST(*found == m.tag);
      if (m.kind == turn_kind::tool_large)
        BOOST_TEST(m.content.size() >= 20u * 1024);
    }
  }
  BOOST_TEST(!tag_of("[CONTEXT COMPACTION — REFERENCE ONLY] [soak u1 n2]"));
}

BOOST_AUTO_TEST_CASE(every_fourth_message_carries_markers_and_chinese_ones_a_cjk_marker) {
  message_mix mix;
  mix.chinese_share = 1.0;
  mix.tool_small_share = 0;
  mix.tool_large_share = 0;
  auto rng = user_rng(1, 5);
  for (int64_t seq = 0; seq < 12; ++seq) {
    auto m = plan_message(mix, 5, seq, rng);
    bool marked = seq % 4 == 3;
    BOOST_TEST(m.latin_marker.empty() == !marked);
    BOOST_TEST(m.cjk_marker.empty() == !marked);
    if (marked) {
      BOOST_TEST(m.latin_marker == "mk5x" + std::to_string(seq));
      BOOST_TEST(m.content.find(m.latin_marker) != std::string::npos);
      BOOST_TEST(m.content.find(m.cjk_marker) != std::string::npos);
    }
  }
  BOOST_TEST(cjk_marker(307) == "印记丁甲辛");
}

BOOST_AUTO_TEST_CASE(the_same_seed_gives_the_same_messages) {
  message_mix mix;
  auto a = user_rng(9, 3), b = user_rng(9, 3), c = user_rng(10, 3);
  auto ma = plan_message(mix, 3, 0, a);
  BOOST_TEST(ma.content == plan_message(mix, 3, 0, b).content);
  BOOST_TEST(ma.content != plan_message(mix, 3, 0, c).content);
}

BOOST_AUTO_TEST_CASE(the_largest_message_estimate_covers_the_largest_tool_result) {
  message_mix mix;
  mix.tool_large_share = 0.1;
  mix.tool_large_kb = {20, 200};
  BOOST_TEST(largest_message_tokens(mix) >= 200 * 1024 / 4);
  mix.tool_large_share = 0;
  BOOST_TEST(largest_message_tokens(mix) < 2000);
}

BOOST_AUTO_TEST_SUITE_END() // soak_scenario_test
