// The cut of an over-long summary (SPEC §5.6 size guard, issue 25;
// docs/compaction-guards.md): the summarizer is asked for "about N tokens" (the
// budget, policies/summary_budget) but no max_tokens is sent, so an answer may run
// long. A summary whose estimate exceeds floor(budget × 1.5) is cut to that many
// tokens at a line boundary before the size guard judges the compaction:
//   - whole lines are kept from the start while their estimate fits;
//   - when not even the first line fits, that line is cut at a code-point boundary
//     (never inside a UTF-8 sequence) so the summary is never empty;
//   - trailing whitespace of the kept text is dropped.
// The start of a summary carries its sections in order (goal, constraints, ...), so
// cutting the end loses the least.
//
// Pure function, standard library only; safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace mneme {

// How far past the budget a summary may run before it is cut.
inline constexpr double summary_overrun_factor = 1.5;

struct summary_cut {
  std::string text;
  bool cut = false;             // true when lines were dropped
  int64_t tokens_before = 0;    // estimate_text_tokens of the input
  int64_t tokens_after = 0;     // ... of text
};

// floor(budget_tokens × 1.5), at least 1.
int64_t summary_cut_limit(int64_t budget_tokens);

// REQUIRES: max_tokens >= 1.
summary_cut cut_summary_to_tokens(std::string_view summary, int64_t max_tokens);

} // namespace mneme
