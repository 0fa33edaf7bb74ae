// The window guard (SPEC §5.6, issue 25; docs/compaction-guards.md): the last check
// before any model call. No request whose estimate exceeds the model's window ever
// leaves the process, whatever the cooldown, the anti-thrash lock or the turn's
// attempt budget say; the guard compacts first, and fails the turn with
// context_unfittable when even the smallest context cannot fit.
//
// Sizes (tokens, local estimate: the API's usage describes the previous request):
//   request = live + tools (the tool schemas sent along; 0 when none)
//   fits    iff request + output_reserve <= context_window
//           (the same as request <= effective window = window - reserve, SPEC §2)
//   summary_bound(budget) = floor(budget × 1.5) + the summary markers and message
//           framing: the largest summary a compaction can commit (an LLM summary is
//           cut to budget × 1.5, policies/summary_cut; the fallback stays within the
//           budget, policies/fallback_summary)
//   planned  = head + summary_bound + tail of the ordinary plan (protect_last_n)
//   minimal  = head + summary_bound + the minimal tail: the last real user message
//              and everything after it (its pending tool group)
//
// Decision (decide_window_guard), in order:
//   1. request + reserve <= window               -> send
//   2. minimal + tools + reserve > window        -> unfittable (nothing is sent)
//   3. passes_done >= max_window_guard_passes    -> unfittable (compactions did not
//      bring it under although the sizes said they could)
//   4. otherwise compact: with the minimal tail when the ordinary plan's result
//      would not fit or a guard pass already ran; with the summarizer unless it may
//      not be called (cooldown, or the guard is not allowed to wait for it), else
//      with the local fallback summary.
// The caller re-evaluates after each compaction with passes_done + 1, so one model
// call sees at most max_window_guard_passes (2) guard compactions.
//
// Pure function, standard library only; safe from any thread.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

namespace mneme {

inline constexpr int max_window_guard_passes = 2;

enum class window_guard_action : uint8_t {
  send,                // the request fits: send it
  compact_summarizer,  // compact first, asking the summarizer
  compact_fallback,    // compact first with the local fallback summary (no summarizer call)
  unfittable,          // fail the turn with context_unfittable; nothing is sent
  bad_input,           // a size was negative or the window not positive: nothing is sent
};

std::string_view to_string(window_guard_action a);
std::ostream& operator<<(std::ostream& os, window_guard_action a);

struct window_guard_inputs {
  int64_t context_window = 0;   // the declared window (T7 may have lowered it)
  int64_t output_reserve = 0;   // model.max_tokens (0 = unset)
  int64_t tools_tokens = 0;     // tool schemas sent with the request
  int64_t live_tokens = 0;      // the live context about to be sent
  int64_t planned_tokens = 0;   // live after a compaction with the ordinary plan
  int64_t minimal_tokens = 0;   // live after a compaction with the minimal tail
  bool summarizer_allowed = true; // false during a summary cooldown
  int passes_done = 0;          // guard compactions already run before this call
};

struct window_guard_decision {
  window_guard_action action = window_guard_action::send;
  bool minimal_tail = false;    // compact with the minimal tail
  int64_t needed_tokens = 0;    // live + tools + reserve
  int64_t minimal_needed_tokens = 0; // minimal + tools + reserve

  bool compacts() const {
    return action == window_guard_action::compact_summarizer
           || action == window_guard_action::compact_fallback;
  }
};

window_guard_decision decide_window_guard(const window_guard_inputs& in);

// The output reserve the guard keeps for the answer: model.max_tokens when set; when
// unset (SPEC §2 counts it 0 for the threshold) window / 32, at most 8,192 — a request
// that leaves no room for the answer is no use, and the live context after the
// answer then stays within the window too (an answer longer than the reserve is
// compacted away before the next call). 0 for a non-positive window.
int64_t guard_output_reserve(int64_t context_window, int64_t max_tokens);

// floor(budget × 1.5) + the tokens the summary markers and the message framing add.
int64_t summary_bound_tokens(int64_t budget_tokens);

// The error text of an unfittable turn, naming the sizes.
std::string describe_unfittable(const window_guard_inputs& in, const window_guard_decision& d);

} // namespace mneme
