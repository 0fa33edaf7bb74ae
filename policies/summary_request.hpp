// The summarizer request (SPEC §3): turns the middle of a transcript into one
// chat-completions request asking an LLM for a structured summary, within the
// SPEC's input limits. Also the UTF-8-safe text cutting those limits need, shared
// with policies/fallback_summary.
//
// Characters: every length here counts characters = Unicode code points of the
// UTF-8 text (what the SPEC's "chars" means), never bytes, and every cut falls on
// a code point boundary. Malformed UTF-8 never crashes: a stray continuation byte
// belongs to the character before it.
//
// Shape of the prompt (one user message; the summarizer gets no system message):
//   instructions: sections, language, identifiers, secrets, "target about N tokens"
//   [focus]                        from `/compress [focus]`, when given
//   [=== PREVIOUS SUMMARY ===]     iterative update: the earlier summary's body
//   === TURNS TO SUMMARIZE ===     each message rendered readably; its content cut
//                                  by the per-message limit (6,000 -> 4,000 + 1,500),
//                                  each tool call's arguments by the arguments limit
//                                  (1,500 -> the first 1,200 + marker, like the
//                                  reference: arguments are the assistant's own
//                                  request, whose start says what it did; a large
//                                  file body written by a call adds little)
//   closing line repeating the target (so it survives the 45/55 cut)
// and the whole prompt capped at 160,000 characters. The focus text obeys the
// per-message limit; the previous summary does not (it condenses many turns and
// is bounded by its own budget), only by the prompt cap.
//
// Pure functions, standard library only; safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "messages/transcript.hpp"
#include "messages/chat_request.hpp"

namespace mneme {

// ---------------------------------------------------------------------------
// Text cutting at character boundaries

// Number of characters (code points) of UTF-8 text.
size_t utf8_char_count(std::string_view text);

// The first head_chars and last tail_chars characters of a text, and how many
// characters lie between them. When head_chars + tail_chars covers the text,
// head is the whole text, tail is empty and omitted_chars is 0.
struct head_tail_cut {
  std::string_view head;
  std::string_view tail;
  size_t omitted_chars = 0;
};
head_tail_cut cut_head_and_tail(std::string_view text, size_t head_chars, size_t tail_chars);

// The marker the per-message limit puts between the kept head and tail.
inline constexpr std::string_view message_truncated_marker = "...[truncated]...";

// A text over cap_chars keeps its first head_chars and last tail_chars characters
// around "\n...[truncated]...\n"; a text of at most cap_chars comes back unchanged.
// REQUIRES: head_chars + tail_chars <= cap_chars.
std::string truncate_long_text(std::string_view text, size_t cap_chars, size_t head_chars,
                               size_t tail_chars);

// A text over cap_chars keeps only its first head_chars characters followed by
// "\n...[truncated]..." (the tool-call arguments limit); a text of at most
// cap_chars comes back unchanged.
// REQUIRES: head_chars <= cap_chars.
std::string truncate_text_head(std::string_view text, size_t cap_chars, size_t head_chars);

// Builds the marker placed between head and tail from the cut it describes.
using cut_marker_fn = std::function<std::string(const head_tail_cut&)>;

// A text over cap_chars becomes head + marker + tail of exactly cap_chars
// characters (marker included), the head getting floor(head_share × kept) of the
// kept characters and the tail the rest; omitted_chars in the marker is exact.
// Should the marker's length not settle (digits of the count changing), the
// result is shorter than cap_chars, never longer. A text of at most cap_chars
// comes back unchanged.
// REQUIRES: 0 <= head_share <= 1; the marker is shorter than cap_chars.
std::string cap_text_with_marker(std::string_view text, size_t cap_chars, double head_share,
                                 const cut_marker_fn& marker);

// ---------------------------------------------------------------------------
// The summarizer input limits and the request

// SPEC §3 "summarizer input limits". Not configuration: fixed by the SPEC,
// exposed for tests.
struct summary_input_caps {
  size_t message_cap_chars = 6000;  // a text field longer than this is cut ...
  size_t message_head_chars = 4000; // ... to its first 4,000
  size_t message_tail_chars = 1500; // ... and last 1,500 characters
  size_t tool_args_cap_chars = 1500;  // tool-call arguments longer than this are cut ...
  size_t tool_args_head_chars = 1200; // ... to their first 1,200 characters + marker
  size_t prompt_cap_chars = 160000; // the whole prompt
  double prompt_head_share = 0.45;  // of the kept prompt; the tail keeps the rest (55%)
};

// The marker between the kept head and tail of an over-long prompt:
// "\n\n...[input truncated: N chars omitted]...\n\n", N exact.
std::string prompt_truncated_marker(size_t omitted_chars);

// Caps a prompt at caps.prompt_cap_chars characters (see cap_text_with_marker).
std::string cap_summary_prompt(std::string_view prompt, const summary_input_caps& caps = {});

struct summary_request_params {
  std::string model;                 // the summarizer model (auxiliary.compression.model)
  int64_t budget_tokens = 2000;      // from compute_summary_budget; written into the prompt
  // The body of the summary being updated. nullopt: taken from the middle itself
  // (see previous_summary_in). Either way summaries found in the middle are not
  // repeated among the turns.
  std::optional<std::string> previous_summary;
  std::string focus;                 // `/compress [focus]`; empty = none
  // The retry below compression.min_retention (policies/retention_retry.hpp): the
  // identifiers the first summary dropped, one per line; empty = none.
  std::string must_keep;
  summary_input_caps caps;
};

// The unwrapped bodies of the summaries inside `middle`, in order, joined by a
// blank line: rows flagged is_summary (their whole content when they carry no
// markers) and wrapped summaries merged into other rows. nullopt when none.
std::optional<std::string> previous_summary_in(const std::vector<message>& middle);

// The prompt text, already capped.
// REQUIRES: params.budget_tokens > 0.
std::string build_summary_prompt(const std::vector<message>& middle,
                                 const summary_request_params& params);

// One user message holding build_summary_prompt; purpose = summary; max_tokens
// stays unset (a reasoning model could spend a capped budget on thinking and
// return an empty summary); temperature stays unset (some reasoning models
// reject it).
// REQUIRES: params.budget_tokens > 0.
chat_request build_summary_request(const std::vector<message>& middle,
                                   const summary_request_params& params);

} // namespace mneme
