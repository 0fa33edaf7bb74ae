// Tests of the compaction threshold (SPEC §2): the SPEC's examples, every
// ratio rule and the precedence among them, the 64,000 floor and the
// swallowed-window rule at their boundaries, the absolute cap, inputs that
// cannot be honoured, and the window figures T4 and T7 derive.
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "policies/threshold.hpp"

BOOST_AUTO_TEST_SUITE(threshold_test)

namespace data = boost::unit_test::data;
using namespace mneme;
using rule = ratio_rule;
using limit = threshold_limit;

namespace {

// A model name that matches none of the model-specific rules.
const std::string plain_model = "fake-chat";

threshold_decision defaults_for(const std::string& model, int64_t window,
                                int64_t max_tokens = 0) {
  return compute_threshold(compression_params{}, model, window, max_tokens);
}

compression_params with_ratio(double ratio) {
  compression_params c;
  c.threshold = ratio;
  return c;
}

compression_params with_cap(int64_t cap) {
  compression_params c;
  c.threshold_tokens = cap;
  return c;
}

} // namespace

BOOST_DATA_TEST_CASE(
    the_spec_examples_hold_with_default_settings,
    data::make({int64_t{200000}, int64_t{1000000}, int64_t{64000}})
        ^ data::make({int64_t{150000}, int64_t{500000}, int64_t{54400}})
        ^ data::make({rule::small_window, rule::configured, rule::small_window})
        ^ data::make({limit::ratio, limit::ratio, limit::floor_swallowed_window}),
    window, want_threshold, want_rule, want_limit) {
  auto d = defaults_for(plain_model, window);
  BOOST_TEST(d.ok());
  BOOST_TEST(d.threshold == want_threshold);
  BOOST_TEST(d.rule == want_rule);
  BOOST_TEST(d.limit == want_limit);
}

BOOST_AUTO_TEST_CASE(the_model_block_defaults_give_the_200k_example) {
  auto d = compute_threshold(compression_params{}, model_params{});
  BOOST_TEST(d.threshold == 150000);
  BOOST_TEST(d.effective == 200000);
}

BOOST_DATA_TEST_CASE(
    the_small_window_ratio_of_075_applies_strictly_below_512000,
    data::make({int64_t{131072}, int64_t{200000}, int64_t{511999}, int64_t{512000},
                int64_t{512001}, int64_t{2000000}})
        ^ data::make({0.75, 0.75, 0.75, 0.50, 0.50, 0.50})
        ^ data::make({rule::small_window, rule::small_window, rule::small_window,
                      rule::configured, rule::configured, rule::configured})
        ^ data::make({int64_t{98304}, int64_t{150000}, int64_t{383999}, int64_t{256000},
                      int64_t{256000}, int64_t{1000000}}),
    window, want_ratio, want_rule, want_threshold) {
  auto d = defaults_for(plain_model, window);
  BOOST_TEST(d.ratio == want_ratio);
  BOOST_TEST(d.rule == want_rule);
  BOOST_TEST(d.threshold == want_threshold);
}

// The output reserve is subtracted first; a 1M window keeps the ratio at 0.50
// so that the effective window alone moves the result across the floor.
BOOST_DATA_TEST_CASE(
    the_floor_of_64000_and_the_swallowed_window_rule_meet_at_their_boundaries,
    data::make({int64_t{1000000}, int64_t{1000000}, int64_t{1000000}, int64_t{1000000},
                int64_t{1000000}, int64_t{1000000}, int64_t{85334}, int64_t{85333},
                int64_t{70000}, int64_t{64001}, int64_t{64000}, int64_t{8000}})
        ^ data::make({int64_t{872000}, int64_t{872001}, int64_t{935999}, int64_t{936000},
                      int64_t{999000}, int64_t{32000}, int64_t{0}, int64_t{0}, int64_t{0},
                      int64_t{0}, int64_t{0}, int64_t{0}})
        ^ data::make({int64_t{128000}, int64_t{127999}, int64_t{64001}, int64_t{64000},
                      int64_t{1000}, int64_t{968000}, int64_t{85334}, int64_t{85333},
                      int64_t{70000}, int64_t{64001}, int64_t{64000}, int64_t{8000}})
        ^ data::make({int64_t{64000}, int64_t{64000}, int64_t{64000}, int64_t{54400},
                      int64_t{850}, int64_t{484000}, int64_t{64000}, int64_t{64000},
                      int64_t{64000}, int64_t{64000}, int64_t{54400}, int64_t{6800}})
        ^ data::make({limit::ratio, limit::floor, limit::floor, limit::floor_swallowed_window,
                      limit::floor_swallowed_window, limit::ratio, limit::ratio, limit::floor,
                      limit::floor, limit::floor, limit::floor_swallowed_window,
                      limit::floor_swallowed_window}),
    window, max_tokens, want_effective, want_threshold, want_limit) {
  auto d = defaults_for(plain_model, window, max_tokens);
  BOOST_TEST(d.ok());
  BOOST_TEST(d.effective == want_effective);
  BOOST_TEST(d.threshold == want_threshold);
  BOOST_TEST(d.limit == want_limit);
  BOOST_TEST(d.threshold < d.effective);
}

BOOST_AUTO_TEST_CASE(the_floor_constant_is_64000) {
  BOOST_TEST(threshold_floor_tokens == 64000);
}

// Overrides configured for every case: {"gpt-4": 0.60, "gpt-4o": 0.90,
// "special-reasoner": 0.55}; everything else at its default.
BOOST_DATA_TEST_CASE(
    model_rules_follow_override_then_codex_spark_then_reasoning_then_small_window,
    data::make({"o3-mini", "O1-preview", "deepseek-reasoner", "Qwen3-235B-A22B-Thinking-2507",
                "gemini-2.5-flash-thinking", "gpt-5.3-codex-spark", "openai/GPT-5.3-Codex-Spark",
                "gpt-5.3-codex-spark-thinking", "gpt-5.3-codex", "gpt-4o-mini", "gpt-4-turbo",
                "GPT-4O-2024-08-06", "special-reasoner-v2", "claude-sonnet-4",
                "llama-3.3-70b"})
        ^ data::make({int64_t{200000}, int64_t{128000}, int64_t{131072}, int64_t{262144},
                      int64_t{1048576}, int64_t{128000}, int64_t{128000}, int64_t{128000},
                      int64_t{400000}, int64_t{128000}, int64_t{128000}, int64_t{128000},
                      int64_t{200000}, int64_t{1000000}, int64_t{131072}})
        ^ data::make({0.85, 0.85, 0.85, 0.85, 0.85, 0.70, 0.70, 0.70, 0.75, 0.90, 0.60, 0.90,
                      0.55, 0.50, 0.75})
        ^ data::make({rule::reasoning_model, rule::reasoning_model, rule::reasoning_model,
                      rule::reasoning_model, rule::reasoning_model, rule::codex_spark,
                      rule::codex_spark, rule::codex_spark, rule::small_window,
                      rule::model_override, rule::model_override, rule::model_override,
                      rule::model_override, rule::configured, rule::small_window})
        ^ data::make({int64_t{170000}, int64_t{108800}, int64_t{111411}, int64_t{222822},
                      int64_t{891289}, int64_t{89600}, int64_t{89600}, int64_t{89600},
                      int64_t{300000}, int64_t{115200}, int64_t{76800}, int64_t{115200},
                      int64_t{110000}, int64_t{500000}, int64_t{98304}}),
    model, window, want_ratio, want_rule, want_threshold) {
  compression_params c;
  c.model_thresholds = {{"gpt-4", 0.60}, {"gpt-4o", 0.90}, {"special-reasoner", 0.55}};
  auto d = compute_threshold(c, model, window, 0);
  BOOST_TEST(d.ok());
  BOOST_TEST(d.ratio == want_ratio);
  BOOST_TEST(d.rule == want_rule);
  BOOST_TEST(d.threshold == want_threshold);
}

BOOST_AUTO_TEST_CASE(the_longest_matching_override_key_wins_and_ties_go_to_map_order) {
  compression_params c;
  c.model_thresholds = {{"gpt", 0.60}, {"gpt-4o", 0.90}, {"gpt-4o-mini", 0.65}};
  auto d = compute_threshold(c, "gpt-4o-mini-2024", 1000000, 0);
  BOOST_TEST(d.override_key == "gpt-4o-mini");
  BOOST_TEST(d.threshold == 650000);
  c.model_thresholds = {{"gpt", 0.60}, {"GPT", 0.70}};
  d = compute_threshold(c, "gpt-x", 1000000, 0);
  BOOST_TEST(d.override_key == "GPT"); // "GPT" sorts before "gpt"
  BOOST_TEST(d.ratio == 0.70);
}

BOOST_AUTO_TEST_CASE(an_override_may_lower_the_ratio_below_the_built_in_rules) {
  compression_params c;
  c.model_thresholds = {{"o3", 0.40}};
  auto d = compute_threshold(c, "o3", 200000, 0);
  BOOST_TEST(d.rule == rule::model_override);
  BOOST_TEST(d.threshold == 80000);
}

// The built-in rules raise the configured ratio; they never lower it.
BOOST_DATA_TEST_CASE(
    a_configured_ratio_above_the_built_in_rule_is_kept,
    data::make({0.90, 0.90, 0.90, 0.60, 0.60, 0.80, 0.70})
        ^ data::make({"fake-chat", "o3", "gpt-5.3-codex-spark", "fake-chat", "fake-chat", "o3",
                      "gpt-5.3-codex-spark"})
        ^ data::make({int64_t{200000}, int64_t{200000}, int64_t{128000}, int64_t{1000000},
                      int64_t{200000}, int64_t{200000}, int64_t{128000}})
        ^ data::make({0.90, 0.90, 0.90, 0.60, 0.75, 0.85, 0.70})
        ^ data::make({rule::configured, rule::configured, rule::configured, rule::configured,
                      rule::small_window, rule::reasoning_model, rule::configured})
        ^ data::make({int64_t{180000}, int64_t{180000}, int64_t{115200}, int64_t{600000},
                      int64_t{150000}, int64_t{170000}, int64_t{89600}}),
    configured, model, window, want_ratio, want_rule, want_threshold) {
  auto d = compute_threshold(with_ratio(configured), model, window, 0);
  BOOST_TEST(d.ok());
  BOOST_TEST(d.ratio == want_ratio);
  BOOST_TEST(d.rule == want_rule);
  BOOST_TEST(d.threshold == want_threshold);
}

BOOST_AUTO_TEST_CASE(reasoning_patterns_are_configurable_and_empty_patterns_match_nothing) {
  compression_params c;
  c.reasoning_model_patterns = {"", "r1"};
  BOOST_TEST(compute_threshold(c, "deepseek-r1", 1000000, 0).rule == rule::reasoning_model);
  BOOST_TEST(compute_threshold(c, "o3-mini", 1000000, 0).rule == rule::configured);
  BOOST_TEST(compute_threshold(c, "big-model", 1000000, 0).threshold == 500000);
}

// The cap applies last and only lowers; it may go below the floor.
BOOST_DATA_TEST_CASE(
    the_absolute_cap_applies_last_and_only_lowers,
    data::make({int64_t{0}, int64_t{100000}, int64_t{149999}, int64_t{150000},
                int64_t{150001}, int64_t{30000}, int64_t{1}})
        ^ data::make({int64_t{150000}, int64_t{100000}, int64_t{149999}, int64_t{150000},
                      int64_t{150000}, int64_t{30000}, int64_t{1}})
        ^ data::make({limit::ratio, limit::cap, limit::cap, limit::ratio, limit::ratio,
                      limit::cap, limit::cap}),
    cap, want_threshold, want_limit) {
  auto d = compute_threshold(with_cap(cap), plain_model, 200000, 0);
  BOOST_TEST(d.ok());
  BOOST_TEST(d.threshold == want_threshold);
  BOOST_TEST(d.limit == want_limit);
}

BOOST_AUTO_TEST_CASE(a_cap_above_a_swallowed_window_changes_nothing) {
  auto d = compute_threshold(with_cap(60000), plain_model, 64000, 0);
  BOOST_TEST(d.threshold == 54400);
  BOOST_TEST(d.limit == limit::floor_swallowed_window);
}

BOOST_DATA_TEST_CASE(
    an_unknown_window_is_flagged_and_computed_as_128000,
    data::make({int64_t{0}, int64_t{-1}, std::numeric_limits<int64_t>::min()}), window) {
  auto d = defaults_for(plain_model, window);
  BOOST_TEST(d.has(threshold_problem::unknown_window));
  BOOST_TEST(!d.ok());
  BOOST_TEST(d.window == 128000);
  BOOST_TEST(d.threshold == 96000);
}

// A reserve that leaves no room at all is ignored rather than producing a
// threshold of zero (which would compact on every turn).
BOOST_DATA_TEST_CASE(
    an_output_reserve_that_swallows_the_window_or_is_negative_is_flagged_and_ignored,
    data::make({int64_t{200000}, int64_t{250000}, int64_t{-1},
                std::numeric_limits<int64_t>::max()}),
    max_tokens) {
  auto d = defaults_for(plain_model, 200000, max_tokens);
  BOOST_TEST(d.has(threshold_problem::invalid_reserve));
  BOOST_TEST(d.reserve == 0);
  BOOST_TEST(d.effective == 200000);
  BOOST_TEST(d.threshold == 150000);
}

BOOST_AUTO_TEST_CASE(a_reserve_one_below_the_window_is_honoured) {
  auto d = defaults_for(plain_model, 200000, 199999);
  BOOST_TEST(d.ok());
  BOOST_TEST(d.effective == 1);
  BOOST_TEST(d.threshold == 0);
  BOOST_TEST(d.limit == limit::floor_swallowed_window);
}

BOOST_DATA_TEST_CASE(
    a_configured_ratio_outside_zero_to_one_is_flagged_and_replaced_by_050,
    data::make({0.0, -0.5, 1.5, std::nan(""), std::numeric_limits<double>::infinity()}),
    ratio) {
  auto d = compute_threshold(with_ratio(ratio), plain_model, 1000000, 0);
  BOOST_TEST(d.has(threshold_problem::invalid_ratio));
  BOOST_TEST(d.ratio == 0.50);
  BOOST_TEST(d.threshold == 500000);
}

BOOST_AUTO_TEST_CASE(a_ratio_of_one_is_valid_and_falls_to_85_percent_of_the_effective_window) {
  auto d = compute_threshold(with_ratio(1.0), plain_model, 1000000, 0);
  BOOST_TEST(d.ok());
  BOOST_TEST(d.threshold == 850000);
  BOOST_TEST(d.limit == limit::floor_swallowed_window);
}

BOOST_AUTO_TEST_CASE(an_invalid_override_value_is_flagged_and_skipped_for_the_next_key) {
  compression_params c;
  c.model_thresholds = {{"gpt-x", 1.5}};
  auto d = compute_threshold(c, "gpt-x", 1000000, 0);
  BOOST_TEST(d.has(threshold_problem::invalid_override));
  BOOST_TEST(d.rule == rule::configured);
  BOOST_TEST(d.threshold == 500000);
  c.model_thresholds = {{"gpt-x", 1.5}, {"gpt", 0.60}};
  d = compute_threshold(c, "gpt-x", 1000000, 0);
  BOOST_TEST(d.has(threshold_problem::invalid_override));
  BOOST_TEST(d.override_key == "gpt");
  BOOST_TEST(d.threshold == 600000);
}

BOOST_AUTO_TEST_CASE(a_negative_cap_is_flagged_and_ignored) {
  auto d = compute_threshold(with_cap(-5), plain_model, 200000, 0);
  BOOST_TEST(d.has(threshold_problem::invalid_cap));
  BOOST_TEST(d.threshold == 150000);
}

BOOST_AUTO_TEST_CASE(a_huge_window_neither_overflows_nor_loses_the_ratio) {
  const int64_t window = std::numeric_limits<int64_t>::max();
  auto d = defaults_for(plain_model, window);
  BOOST_TEST(d.ok());
  BOOST_TEST(d.threshold > 0);
  BOOST_TEST(d.threshold <= window / 2 + 1024); // double rounding at 2^63
}

BOOST_AUTO_TEST_CASE(the_description_names_every_figure_and_rule) {
  BOOST_TEST(describe(defaults_for(plain_model, 200000))
             == "window=200000 reserve=0 effective=200000 ratio=0.75 rule=small_window "
                "limit=ratio threshold=150000");
  compression_params c;
  c.model_thresholds = {{"gpt-4o", 0.9}};
  c.threshold_tokens = 100000;
  BOOST_TEST(describe(compute_threshold(c, "gpt-4o", 128000, 128000))
             == "window=128000 reserve=0 effective=128000 ratio=0.9 rule=model_override "
                "override_key=\"gpt-4o\" limit=cap threshold=100000 problem=invalid_reserve");
}

BOOST_DATA_TEST_CASE(
    a_long_context_rate_limit_steps_the_window_down_to_at_most_200000,
    data::make({int64_t{1000000}, int64_t{200001}, int64_t{200000}, int64_t{128000},
                int64_t{1}, int64_t{0}, int64_t{-1}})
        ^ data::make({int64_t{200000}, int64_t{200000}, int64_t{200000}, int64_t{128000},
                      int64_t{1}, int64_t{200000}, int64_t{200000}}),
    window, want) {
  BOOST_TEST(long_context_step_down(window) == want);
}

BOOST_DATA_TEST_CASE(
    the_hygiene_token_limit_is_85_percent_of_the_window,
    data::make({int64_t{1000000}, int64_t{200000}, int64_t{131072}, int64_t{128000},
                int64_t{64000}, int64_t{20}, int64_t{1}, int64_t{0}, int64_t{-7}})
        ^ data::make({int64_t{850000}, int64_t{170000}, int64_t{111411}, int64_t{108800},
                      int64_t{54400}, int64_t{17}, int64_t{0}, int64_t{108800},
                      int64_t{108800}}),
    window, want) {
  BOOST_TEST(hygiene_token_limit(window) == want);
}

BOOST_AUTO_TEST_SUITE_END() // threshold_test
