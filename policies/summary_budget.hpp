// The summary budget (SPEC §3): how many tokens the summarizer is asked to aim for
// when it condenses the middle of a transcript. The number is written into the
// summarizer prompt ("target about N tokens"); it is never sent as max_tokens.
//
//   budget = min(clamp(floor(target_ratio × tokens_to_summarize),
//                      floor   = 2,000,
//                      ceiling = min(10,000, floor(5% of the context window))),
//                freed = max(1, floor(tokens_to_summarize / 2)))
//
// The budget never exceeds what the compaction frees (SPEC §5.6, issue 25): a
// summary of budget tokens replacing a middle of M tokens frees M - budget, so
// budget <= M / 2 keeps the summary no larger than what it frees. The 2,000 floor
// gives way to it (a 2,333-token middle gets 1,166, not 2,000, so its summary
// cannot come out larger than the middle). Below 2 tokens of middle the budget is 1.
//
// Small windows (below 40,000 tokens, where 5% of the window is under 2,000): the
// ceiling wins over the floor, so the budget is floor(window / 20) whatever the
// input size. A summary bigger than 5% of a small window would eat the room the
// compaction is meant to free; the clamp is never inverted and never negative.
//
// Pure function, standard library only; safe from any thread.
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>

namespace mneme {

inline constexpr int64_t summary_budget_floor_tokens = 2000;
inline constexpr int64_t summary_budget_ceiling_tokens = 10000;
inline constexpr int64_t summary_budget_window_divisor = 20;  // 5% of the window

// Which rule of the clamp decided the budget (for logs and metrics).
enum class summary_budget_rule : uint8_t {
  ratio,            // target_ratio × tokens lay inside the bounds
  floor,            // raised to 2,000
  absolute_ceiling, // lowered to 10,000
  window_ceiling,   // lowered to 5% of the window (also when that is below 2,000)
  freed_ceiling,    // lowered to half the middle: never more than the compaction frees
};

// Why no budget could be computed.
enum class summary_budget_error : uint8_t {
  none,
  negative_tokens,   // tokens_to_summarize < 0
  window_too_small,  // context_window < 20: 5% of it rounds to zero tokens
  bad_target_ratio,  // target_ratio not finite or outside (0, 1]
};

std::string_view to_string(summary_budget_rule r);
std::string_view to_string(summary_budget_error e);
std::ostream& operator<<(std::ostream& os, summary_budget_rule r);
std::ostream& operator<<(std::ostream& os, summary_budget_error e);

// Invariant: ok() implies 1 <= tokens <= 10,000, tokens <= context_window / 20 and
// tokens <= max(1, tokens_to_summarize / 2).
// When !ok(), tokens is 0 and error names the offending input.
struct summary_budget {
  int64_t tokens = 0;
  summary_budget_rule rule = summary_budget_rule::ratio;
  summary_budget_error error = summary_budget_error::none;
  bool ok() const { return error == summary_budget_error::none; }
};

// tokens_to_summarize: the estimated (or API-reported) tokens of the middle being
// compacted. context_window: the session model's context_length in tokens.
// target_ratio: compression.target_ratio (default 0.20).
summary_budget compute_summary_budget(int64_t tokens_to_summarize, int64_t context_window,
                                      double target_ratio = 0.20);

} // namespace mneme
