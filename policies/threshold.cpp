// Implementation of the threshold rules; the numbered steps are in threshold.hpp.
#include "policies/threshold.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <ostream>

#include "policies/utf8.hpp"

namespace mneme {

namespace {

bool valid_ratio(double r) { return std::isfinite(r) && r > 0.0 && r <= 1.0; }

// tokens * ratio truncated to whole tokens; the tolerance keeps binary
// fractions such as 0.85 from losing a token (64,000 * 0.85 == 54,400).
// REQUIRES: tokens >= 0, 0 <= ratio <= 1
int64_t scale(int64_t tokens, double ratio) {
  assert(tokens >= 0 && ratio >= 0.0 && ratio <= 1.0);
  const double product = std::floor(static_cast<double>(tokens) * ratio + 1e-6);
  return std::min(tokens, static_cast<int64_t>(product));
}

void set(threshold_decision& d, threshold_problem p) {
  d.problems = static_cast<uint8_t>(d.problems | static_cast<uint8_t>(p));
}

// Step 3a: the longest matching model_thresholds key with a valid value.
bool apply_model_override(const compression_params& c, std::string_view model,
                          threshold_decision& d) {
  const std::string* best_key = nullptr;
  double best_ratio = 0;
  for (const auto& [key, ratio] : c.model_thresholds) {
    if (!contains_ignoring_case(model, key)) continue;
    if (!valid_ratio(ratio)) {
      set(d, threshold_problem::invalid_override);
      continue;
    }
    if (best_key == nullptr || key.size() > best_key->size()) {
      best_key = &key;
      best_ratio = ratio;
    }
  }
  if (best_key == nullptr) return false;
  d.ratio = best_ratio;
  d.rule = ratio_rule::model_override;
  d.override_key = *best_key;
  return true;
}

// Step 3b: the most specific built-in rule, raising the configured ratio.
void apply_builtin_rules(const compression_params& c, std::string_view model,
                         threshold_decision& d) {
  double configured = c.threshold;
  if (!valid_ratio(configured)) {
    set(d, threshold_problem::invalid_ratio);
    configured = default_threshold_ratio;
  }
  auto is_reasoning = [&] {
    return std::any_of(c.reasoning_model_patterns.begin(), c.reasoning_model_patterns.end(),
                       [&](const std::string& p) {
                         return !p.empty() && contains_ignoring_case(model, p);
                       });
  };
  ratio_rule rule = ratio_rule::configured;
  double proposed = 0;
  if (contains_ignoring_case(model, codex_spark_model)) {
    rule = ratio_rule::codex_spark;
    proposed = codex_spark_ratio;
  } else if (is_reasoning()) {
    rule = ratio_rule::reasoning_model;
    proposed = reasoning_model_ratio;
  } else if (d.window < small_window_below_tokens) {
    rule = ratio_rule::small_window;
    proposed = small_window_ratio;
  }
  if (rule != ratio_rule::configured && proposed > configured) {
    d.ratio = proposed;
    d.rule = rule;
  } else {
    d.ratio = configured;
    d.rule = ratio_rule::configured;
  }
}

} // namespace

std::string_view to_string(ratio_rule r) {
  switch (r) {
    case ratio_rule::configured: return "configured";
    case ratio_rule::small_window: return "small_window";
    case ratio_rule::reasoning_model: return "reasoning_model";
    case ratio_rule::codex_spark: return "codex_spark";
    case ratio_rule::model_override: return "model_override";
  }
  return "unknown";
}

std::string_view to_string(threshold_limit l) {
  switch (l) {
    case threshold_limit::ratio: return "ratio";
    case threshold_limit::floor: return "floor";
    case threshold_limit::floor_swallowed_window: return "floor_swallowed_window";
    case threshold_limit::cap: return "cap";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, ratio_rule r) { return os << to_string(r); }

std::ostream& operator<<(std::ostream& os, threshold_limit l) { return os << to_string(l); }

threshold_decision compute_threshold(const compression_params& compression,
                                     std::string_view model_name, int64_t context_window,
                                     int64_t max_tokens) {
  threshold_decision d;
  // Step 1.
  d.window = context_window;
  if (d.window <= 0) {
    set(d, threshold_problem::unknown_window);
    d.window = unknown_context_window_tokens;
  }
  // Step 2.
  d.reserve = max_tokens;
  if (d.reserve < 0 || d.reserve >= d.window) {
    set(d, threshold_problem::invalid_reserve);
    d.reserve = 0;
  }
  d.effective = d.window - d.reserve;
  // Step 3.
  if (!apply_model_override(compression, model_name, d))
    apply_builtin_rules(compression, model_name, d);
  // Step 4.
  d.threshold = scale(d.effective, d.ratio);
  d.limit = threshold_limit::ratio;
  if (d.threshold < threshold_floor_tokens) {
    d.threshold = threshold_floor_tokens;
    d.limit = threshold_limit::floor;
  }
  // Step 5.
  if (d.threshold >= d.effective) {
    d.threshold = scale(d.effective, swallowed_window_ratio);
    d.limit = threshold_limit::floor_swallowed_window;
  }
  // Step 6.
  if (compression.threshold_tokens < 0) {
    set(d, threshold_problem::invalid_cap);
  } else if (compression.threshold_tokens > 0 && compression.threshold_tokens < d.threshold) {
    d.threshold = compression.threshold_tokens;
    d.limit = threshold_limit::cap;
  }
  return d;
}

std::string describe(const threshold_decision& d) {
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%g", d.ratio);
  std::string out = "window=" + std::to_string(d.window) + " reserve=" + std::to_string(d.reserve)
                    + " effective=" + std::to_string(d.effective) + " ratio=" + ratio
                    + " rule=" + std::string{to_string(d.rule)};
  if (d.rule == ratio_rule::model_override) out += " override_key=\"" + d.override_key + "\"";
  out += " limit=" + std::string{to_string(d.limit)} + " threshold=" + std::to_string(d.threshold);
  static constexpr std::pair<threshold_problem, const char*> names[] = {
    {threshold_problem::unknown_window, "unknown_window"},
    {threshold_problem::invalid_reserve, "invalid_reserve"},
    {threshold_problem::invalid_ratio, "invalid_ratio"},
    {threshold_problem::invalid_override, "invalid_override"},
    {threshold_problem::invalid_cap, "invalid_cap"},
  };
  for (const auto& [bit, name] : names)
    if (d.has(bit)) out += std::string{" problem="} + name;
  return out;
}

int64_t long_context_step_down(int64_t window) {
  if (window <= 0) return long_context_window_cap_tokens;
  return std::min(window, long_context_window_cap_tokens);
}

int64_t hygiene_token_limit(int64_t window) {
  if (window <= 0) window = unknown_context_window_tokens;
  return scale(window, hygiene_window_ratio);
}

} // namespace mneme
