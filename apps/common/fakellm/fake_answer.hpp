// What the fake LLM answers, as pure functions of the request's messages: a
// deterministic extractive "summary" for summary requests and a deterministic
// chat reply for everything else. Standard library plus the project's token
// estimator only; no I/O, no clock, no randomness. Safe from any thread.
//
// Summary rules (fake_summary):
//   1. The length respects the requested target: estimate_text_tokens(summary)
//      <= target_tokens (for target_tokens >= min_summary_target_tokens).
//   2. Identifiers found in the non-system messages are kept verbatim, in order
//      of first appearance, each once: URLs, paths and file names, anything with
//      a digit (numbers, ids, versions), snake_case / SCREAMING_CASE names, and
//      words ending in Error / Exception. They fill at most ~40% of the target.
//   3. The rest of the target is filled with whole lines of the input (each cut
//      at max_extract_line_chars): lines mentioning an error or an identifier
//      first, then the most recent lines; printed in their original order.
//   4. Same messages and target -> byte-identical summary.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "messages/transcript.hpp"

namespace mneme::fakellm {

inline constexpr int64_t min_summary_target_tokens = 64;
inline constexpr size_t max_extract_line_chars = 300;

// The N of the first "target about N tokens" phrase in `text`, if any.
std::optional<int64_t> find_summary_target(std::string_view text);

// The same search over every message's content.
std::optional<int64_t> find_summary_target(const std::vector<message>& msgs);

// Rule 2's identifiers of `text`, deduplicated, in order of first appearance.
std::vector<std::string> extract_identifiers(std::string_view text);

// The extractive summary of `msgs` (rules 1-4).
// REQUIRES: target_tokens >= min_summary_target_tokens.
std::string fake_summary(const std::vector<message>& msgs, int64_t target_tokens);

// A deterministic reply derived from the last user message (or the last message),
// of about `answer_tokens` tokens (at least 1 token, never empty).
// REQUIRES: answer_tokens >= 1.
std::string fake_chat_answer(const std::vector<message>& msgs, int64_t answer_tokens);

} // namespace mneme::fakellm
