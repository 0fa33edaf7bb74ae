// The local fallback summary (SPEC §3): what a compaction inserts when the
// summarizer LLM fails (timeout, network, 5xx, rate limit, malformed or empty
// answer) and abort_on_summary_failure is off. Built by code only: deterministic,
// no network, no clock, so compaction keeps bounding the live context during an
// outage (SPEC §5.4). The caller wraps the result with wrap_summary like an LLM
// summary.
//
// Format (one line per message, whitespace runs collapsed to one space):
//
//   Local fallback summary (the summarizer was unavailable): the 42 compacted
//     messages as "role: content" lines, long ones shortened.    (one line)
//   earlier summary: <body of a summary found in the middle>
//   user: <content>
//   assistant: <content> [tool calls: grep({"q":"x"}); ls({})]
//   tool grep: <content>
//
// Limits:
//   - a message line's text over 1,000 characters keeps its first 600 and last
//     300 around "...[truncated]..."; an earlier summary (the best record of even
//     older turns) gets 3,000 / 2,000 / 800 instead;
//   - the whole text is capped at 8,000 characters (code points): over the cap it
//     keeps the first 45% and last 55% of the room left by a marker
//     "[... N chars omitted, including K whole messages ...]" (K counts the lines
//     lying entirely inside the cut; an earlier-summary line counts as one) and
//     is then exactly 8,000 characters long (never more; see cap_text_with_marker).
//     The wrap_summary markers come on top of the cap.
// The line form means the body never holds a summary marker line at a line start
// except where a cut lands mid-line, and wrap_summary escapes that case.
//
// Pure function, standard library only; safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "messages/transcript.hpp"

namespace mneme {

struct fallback_summary_limits {
  size_t cap_chars = 8000;            // SPEC §3
  size_t message_cap_chars = 1000;    // per line text ...
  size_t message_head_chars = 600;    // ... keeps its first 600
  size_t message_tail_chars = 300;    // ... and last 300 characters
  size_t summary_cap_chars = 3000;    // an earlier summary's line text ...
  size_t summary_head_chars = 2000;
  size_t summary_tail_chars = 800;
  double head_share = 0.45;           // of the kept text when over the cap
};

// REQUIRES: limits.message_head_chars + limits.message_tail_chars <= limits.message_cap_chars,
//           the same for the summary_* fields, and limits.cap_chars >= 100 (room for the marker).
std::string build_fallback_summary(const std::vector<message>& middle,
                                   const fallback_summary_limits& limits = {});

// The fallback held to a summary budget (SPEC §5.6, issue 25; docs/compaction-guards.md):
// the fallback's size scales with the window through the budget
// (policies/summary_budget: at most 5% of the window and half the middle), so a
// fallback never replaces a middle with something larger. Starts from
// cap_chars = min(limits.cap_chars, budget_tokens × 4) and lowers the cap (at most a
// few rebuilds, deterministic) until estimate_text_tokens(text) <= budget_tokens.
// The cap never goes below 100 characters (room for the omission marker): for a
// budget under ~25 tokens the text may exceed the budget, and the size guard
// (compaction_outcome::grew) then refuses the commit if it would grow the context.
// REQUIRES: the build_fallback_summary requirements on limits; budget_tokens >= 1.
std::string build_fallback_summary_within(const std::vector<message>& middle,
                                          int64_t budget_tokens,
                                          fallback_summary_limits limits = {});

} // namespace mneme
