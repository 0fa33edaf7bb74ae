// The summary budget clamp; see summary_budget.hpp for the rule and its edge cases.
#include "policies/summary_budget.hpp"

#include <algorithm>
#include <cmath>

namespace mneme {

std::string_view to_string(summary_budget_rule r) {
  switch (r) {
    case summary_budget_rule::ratio: return "ratio";
    case summary_budget_rule::floor: return "floor";
    case summary_budget_rule::absolute_ceiling: return "absolute_ceiling";
    case summary_budget_rule::window_ceiling: return "window_ceiling";
    case summary_budget_rule::freed_ceiling: return "freed_ceiling";
  }
  return "unknown";
}

std::string_view to_string(summary_budget_error e) {
  switch (e) {
    case summary_budget_error::none: return "none";
    case summary_budget_error::negative_tokens: return "negative_tokens";
    case summary_budget_error::window_too_small: return "window_too_small";
    case summary_budget_error::bad_target_ratio: return "bad_target_ratio";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, summary_budget_rule r) { return os << to_string(r); }

std::ostream& operator<<(std::ostream& os, summary_budget_error e) { return os << to_string(e); }

summary_budget compute_summary_budget(int64_t tokens_to_summarize, int64_t context_window,
                                      double target_ratio) {
  summary_budget out;
  if (tokens_to_summarize < 0) {
    out.error = summary_budget_error::negative_tokens;
    return out;
  }
  if (!std::isfinite(target_ratio) || target_ratio <= 0.0 || target_ratio > 1.0) {
    out.error = summary_budget_error::bad_target_ratio;
    return out;
  }
  const int64_t window_ceiling = context_window / summary_budget_window_divisor;
  if (window_ceiling < 1) {
    out.error = summary_budget_error::window_too_small;
    return out;
  }
  const bool window_is_tighter = window_ceiling < summary_budget_ceiling_tokens;
  const int64_t ceiling = window_is_tighter ? window_ceiling : summary_budget_ceiling_tokens;
  const auto ceiling_rule = window_is_tighter ? summary_budget_rule::window_ceiling
                                              : summary_budget_rule::absolute_ceiling;

  // Compare in floating point before converting: a huge input must not overflow.
  const double wanted = std::floor(target_ratio * static_cast<double>(tokens_to_summarize));
  if (wanted >= static_cast<double>(ceiling)) {
    out.tokens = ceiling;
    out.rule = ceiling_rule;
  } else if (wanted < static_cast<double>(summary_budget_floor_tokens)) {
    // Floor, unless the ceiling is itself below the floor (small window): the
    // ceiling wins so the clamp is never inverted.
    out.tokens = std::min(summary_budget_floor_tokens, ceiling);
    out.rule = ceiling < summary_budget_floor_tokens ? ceiling_rule : summary_budget_rule::floor;
  } else {
    out.tokens = static_cast<int64_t>(wanted);
    out.rule = summary_budget_rule::ratio;
  }
  // Never more than the compaction frees: budget <= middle / 2 (at least 1).
  const int64_t freed = std::max<int64_t>(1, tokens_to_summarize / 2);
  if (out.tokens > freed) {
    out.tokens = freed;
    out.rule = summary_budget_rule::freed_ceiling;
  }
  return out;
}

} // namespace mneme
