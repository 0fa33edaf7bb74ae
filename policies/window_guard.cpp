// The window guard decision; see window_guard.hpp for the rule.
#include "policies/window_guard.hpp"

#include <algorithm>
#include <ostream>

#include "policies/summary_cut.hpp"
#include "policies/summary_markers.hpp"
#include "policies/token_estimate.hpp"

namespace mneme {

std::string_view to_string(window_guard_action a) {
  switch (a) {
    case window_guard_action::send: return "send";
    case window_guard_action::compact_summarizer: return "compact_summarizer";
    case window_guard_action::compact_fallback: return "compact_fallback";
    case window_guard_action::unfittable: return "unfittable";
    case window_guard_action::bad_input: return "bad_input";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, window_guard_action a) { return os << to_string(a); }

window_guard_decision decide_window_guard(const window_guard_inputs& in) {
  window_guard_decision d;
  if (in.context_window <= 0 || in.output_reserve < 0 || in.tools_tokens < 0
      || in.live_tokens < 0 || in.planned_tokens < 0 || in.minimal_tokens < 0
      || in.passes_done < 0) {
    d.action = window_guard_action::bad_input;
    return d;
  }
  const int64_t extra = in.tools_tokens + in.output_reserve;
  d.needed_tokens = in.live_tokens + extra;
  d.minimal_needed_tokens = in.minimal_tokens + extra;
  if (d.needed_tokens <= in.context_window) {
    d.action = window_guard_action::send;
    return d;
  }
  if (d.minimal_needed_tokens > in.context_window
      || in.passes_done >= max_window_guard_passes) {
    d.action = window_guard_action::unfittable;
    return d;
  }
  d.minimal_tail = in.passes_done > 0 || in.planned_tokens + extra > in.context_window;
  d.action = in.summarizer_allowed ? window_guard_action::compact_summarizer
                                   : window_guard_action::compact_fallback;
  return d;
}

int64_t guard_output_reserve(int64_t context_window, int64_t max_tokens) {
  if (max_tokens > 0)
    return max_tokens;
  if (context_window <= 0)
    return 0;
  return std::min<int64_t>(context_window / 32, 8192);
}

int64_t summary_bound_tokens(int64_t budget_tokens) {
  static const int64_t framing = estimate_text_tokens(wrap_summary("")) + message_overhead_tokens;
  return summary_cut_limit(budget_tokens) + framing;
}

std::string describe_unfittable(const window_guard_inputs& in, const window_guard_decision& d) {
  return "the request needs " + std::to_string(d.needed_tokens) + " tokens (live context "
         + std::to_string(in.live_tokens) + " + tools " + std::to_string(in.tools_tokens)
         + " + output reserve " + std::to_string(in.output_reserve) + ") but the window is "
         + std::to_string(in.context_window) + "; the smallest context a compaction can leave"
         + " (head + summary + the last user message and its tool group) needs "
         + std::to_string(d.minimal_needed_tokens) + " tokens";
}

} // namespace mneme
