// The compaction threshold of a session (SPEC §2) and the window figures the
// other triggers derive from the model profile: T4's hygiene limit, T5's
// floor, T7's long-context step-down. Pure functions of their arguments, safe
// from any thread; computed when a session starts or its window changes, and
// by `config check` to show why a model gets the threshold it gets.
//
// Computation (compute_threshold), in order:
//   1. window  = context_window; a window <= 0 is unknown and replaced by
//      unknown_context_window_tokens (problem unknown_window).
//   2. reserve = max_tokens; a reserve < 0 or >= window cannot be honoured and
//      is ignored, i.e. taken as 0 (problem invalid_reserve).
//      effective = window - reserve.
//   3. ratio (precedence decided here; the SPEC lists the rules, not their order):
//      a. compression.model_thresholds: the longest key that is a
//         case-insensitive substring of the model name wins outright (equal
//         lengths: the key first in map order). Values outside (0, 1] are
//         skipped (problem invalid_override).
//      b. otherwise the most specific built-in rule proposes a ratio:
//         gpt-5.3-codex-spark (0.70) > reasoning model, i.e. the name contains
//         a reasoning_model_patterns entry case-insensitively (0.85) > window
//         below 512,000 (0.75). The SPEC says these rules RAISE the configured
//         ratio, so the result is max(compression.threshold, proposal): a user
//         who configures a higher ratio keeps it (rule = configured).
//         compression.threshold outside (0, 1] is replaced by the SPEC default
//         0.50 (problem invalid_ratio).
//   4. threshold = max(effective * ratio, threshold_floor_tokens); products are
//      truncated to whole tokens.
//   5. if threshold >= effective: threshold = effective * 0.85
//      (limit = floor_swallowed_window).
//   6. if compression.threshold_tokens > 0: threshold = min(threshold, cap)
//      (limit = cap when the cap is what decided). A negative cap is ignored
//      (problem invalid_cap).
// The SPEC's examples hold: 200K window -> 150,000; 1M -> 500,000; 64K -> 54,400.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

#include "policies/compression_params.hpp"

namespace mneme {

inline constexpr int64_t threshold_floor_tokens = 64000;          // step 4; T5 too
inline constexpr int64_t small_window_below_tokens = 512000;       // step 3b
inline constexpr int64_t unknown_context_window_tokens = 128000;   // step 1
inline constexpr int64_t long_context_window_cap_tokens = 200000;  // T7
inline constexpr double default_threshold_ratio = 0.50;
inline constexpr double small_window_ratio = 0.75;
inline constexpr double reasoning_model_ratio = 0.85;
inline constexpr double codex_spark_ratio = 0.70;
inline constexpr double swallowed_window_ratio = 0.85;             // step 5
inline constexpr double hygiene_window_ratio = 0.85;               // T4
inline constexpr std::string_view codex_spark_model = "gpt-5.3-codex-spark";

// Which rule chose the ratio (step 3).
enum class ratio_rule : uint8_t { configured, small_window, reasoning_model, codex_spark,
                                  model_override };

// What decided the final number (steps 4-6).
enum class threshold_limit : uint8_t { ratio, floor, floor_swallowed_window, cap };

// Input that could not be honoured as given; a bit set, several may apply.
enum class threshold_problem : uint8_t {
  none = 0,
  unknown_window = 1,   // context_window <= 0
  invalid_reserve = 2,  // max_tokens < 0 or >= context_window
  invalid_ratio = 4,    // compression.threshold outside (0, 1]
  invalid_override = 8, // a matching model_thresholds value outside (0, 1]
  invalid_cap = 16,     // compression.threshold_tokens < 0
};

std::string_view to_string(ratio_rule r);
std::string_view to_string(threshold_limit l);
std::ostream& operator<<(std::ostream& os, ratio_rule r);
std::ostream& operator<<(std::ostream& os, threshold_limit l);

// The threshold and why it is what it is.
struct threshold_decision {
  int64_t window = 0;          // after step 1
  int64_t reserve = 0;         // after step 2
  int64_t effective = 0;       // window - reserve
  double ratio = 0;            // after step 3
  ratio_rule rule = ratio_rule::configured;
  std::string override_key;    // the model_thresholds key, when rule == model_override
  threshold_limit limit = threshold_limit::ratio;
  uint8_t problems = 0;        // threshold_problem bits
  int64_t threshold = 0;       // the result; > 0 whenever effective >= 2

  bool has(threshold_problem p) const { return (problems & static_cast<uint8_t>(p)) != 0; }
  bool ok() const { return problems == 0; }
};

threshold_decision compute_threshold(const compression_params& compression,
                                     std::string_view model_name, int64_t context_window,
                                     int64_t max_tokens);

inline threshold_decision compute_threshold(const compression_params& compression,
                                            const model_params& model) {
  return compute_threshold(compression, model.name, model.context_length, model.max_tokens);
}

// One line for logs and `config check`, e.g.
// "window=200000 reserve=0 effective=200000 ratio=0.75 rule=small_window
//  limit=ratio threshold=150000".
std::string describe(const threshold_decision& d);

// T7: the window a session declares after a long-context rate limit:
// min(window, 200,000); an unknown window (<= 0) becomes 200,000.
int64_t long_context_step_down(int64_t window);

// T4: 85% of the context window, truncated; an unknown window (<= 0) counts as
// unknown_context_window_tokens.
int64_t hygiene_token_limit(int64_t window);

} // namespace mneme
