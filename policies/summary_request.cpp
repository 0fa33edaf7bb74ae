// The summarizer request and the character-safe cutting it relies on; see
// summary_request.hpp for the prompt shape and the limits.
#include "policies/summary_request.hpp"

#include <bitset>
#include <cassert>
#include <cctype>
#include <cmath>
#include <cstring>

#include "policies/summary_markers.hpp"
#include "policies/utf8_cut.hpp"

namespace mneme {

namespace {

// Byte offset just past the first n characters (text.size() when it has fewer).
size_t offset_after_chars(std::string_view text, size_t n) {
  size_t pos = 0;
  while (n > 0 && pos < text.size()) {
    ++pos;
    while (pos < text.size() && is_utf8_continuation(text[pos])) ++pos;
    --n;
  }
  return pos;
}

// Byte offset where the last n characters begin (0 when it has fewer).
size_t offset_of_last_chars(std::string_view text, size_t n) {
  size_t pos = text.size();
  while (n > 0 && pos > 0) {
    --pos;
    while (pos > 0 && is_utf8_continuation(text[pos])) --pos;
    --n;
  }
  return pos;
}

// cut_head_and_tail for a caller that already counted the text's characters.
head_tail_cut cut_with_known_total(std::string_view text, size_t total, size_t head_chars,
                                   size_t tail_chars) {
  if (head_chars >= total || tail_chars >= total - head_chars) return {text, {}, 0};
  const size_t head_end = offset_after_chars(text, head_chars);
  const size_t tail_begin = offset_of_last_chars(text, tail_chars);
  assert(head_end <= tail_begin);
  return {text.substr(0, head_end), text.substr(tail_begin), total - head_chars - tail_chars};
}

std::string capped_field(std::string_view text, const summary_input_caps& caps) {
  return truncate_long_text(text, caps.message_cap_chars, caps.message_head_chars,
                            caps.message_tail_chars);
}

// One message as the summarizer reads it:
//   [3] ASSISTANT:
//   <content>
//     [tool call call_1] grep({"q":"x"})
//   [4] TOOL grep (result of call_1):
//   <content>
void render_turn(std::string& out, size_t number, const message& m, std::string_view content,
                 const summary_input_caps& caps) {
  out += '[';
  out += std::to_string(number);
  out += "] ";
  for (char c : to_string(m.role))
    out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (m.role == msg_role::tool) {
    if (!m.tool_name.empty()) {
      out += ' ';
      out += m.tool_name;
    }
    if (!m.tool_call_id.empty()) {
      out += " (result of ";
      out += m.tool_call_id;
      out += ')';
    }
  }
  out += ":\n";
  if (!content.empty()) {
    if (content.size() <= caps.message_cap_chars)  // bytes >= characters: no cut
      out.append(content);
    else
      out += capped_field(content, caps);
    out += '\n';
  }
  for (const auto& call : m.tool_calls) {
    out += "  [tool call";
    if (!call.id.empty()) {
      out += ' ';
      out += call.id;
    }
    out += "] ";
    out += call.name;
    out += '(';
    out += truncate_text_head(call.arguments, caps.tool_args_cap_chars,
                              caps.tool_args_head_chars);
    out += ")\n";
  }
}

constexpr std::string_view instructions_head =
    "You are compacting the middle of a long conversation between a user and an AI "
    "assistant, so that the conversation can continue within the model's context window. "
    "Write a summary of the turns below that lets the assistant carry on the work without "
    "them.\n";

constexpr std::string_view sections =
    "Use exactly these sections, in this order, each under its own heading:\n"
    "## Goal\n"
    "## Constraints and preferences\n"
    "## Completed actions\n"
    "## Current state\n"
    "## Open questions and blocked items\n"
    "## Key decisions\n"
    "## Relevant files and identifiers\n"
    "## Latest user request (verbatim)\n";

constexpr std::string_view rules =
    "Rules:\n"
    "- Write in the language the user writes in.\n"
    "- Copy identifiers exactly as they appear: file paths, URLs, ids, names, commands, "
    "error strings, version numbers.\n"
    "- Redact secrets: write [REDACTED] instead of API keys, passwords, tokens, private "
    "keys and credentials.\n"
    "- Quote the latest user request word for word in its section.\n"
    "- Write \"none\" under a section that has nothing to report.\n"
    "- Output only the summary: no preamble, no closing remarks.\n";

constexpr std::string_view iterative_update =
    "A previous summary of even earlier turns comes first. Update it with the new turns: "
    "keep what still holds, revise what changed, drop what was superseded, add what is "
    "new. Your summary replaces the previous one, so it must stand on its own.\n";

} // namespace

size_t utf8_char_count(std::string_view text) {
  if (text.empty()) return 0;
  // Eight bytes at a time (prompts reach megabytes): a continuation byte has bit 7
  // set and bit 6 clear; shifting left by one moves each byte's bit 6 onto its bit 7.
  constexpr uint64_t high_bits = 0x8080808080808080ULL;
  size_t continuation = 0;
  size_t i = 1;  // position 0 always starts a character
  for (; i + 8 <= text.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, text.data() + i, sizeof w);
    continuation += std::bitset<64>(w & ~(w << 1) & high_bits).count();
  }
  for (; i < text.size(); ++i)
    continuation += static_cast<size_t>(is_utf8_continuation(text[i]));
  return text.size() - continuation;
}

head_tail_cut cut_head_and_tail(std::string_view text, size_t head_chars, size_t tail_chars) {
  return cut_with_known_total(text, utf8_char_count(text), head_chars, tail_chars);
}

std::string truncate_long_text(std::string_view text, size_t cap_chars, size_t head_chars,
                               size_t tail_chars) {
  assert(head_chars + tail_chars <= cap_chars);
  if (text.size() <= cap_chars) return std::string{text};  // bytes >= characters
  const size_t total = utf8_char_count(text);
  if (total <= cap_chars) return std::string{text};
  const auto cut = cut_with_known_total(text, total, head_chars, tail_chars);
  std::string out;
  out.reserve(cut.head.size() + cut.tail.size() + message_truncated_marker.size() + 2);
  out.append(cut.head);
  out += '\n';
  out.append(message_truncated_marker);
  out += '\n';
  out.append(cut.tail);
  return out;
}

std::string truncate_text_head(std::string_view text, size_t cap_chars, size_t head_chars) {
  assert(head_chars <= cap_chars);
  if (text.size() <= cap_chars) return std::string{text};  // bytes >= characters
  if (utf8_char_count(text) <= cap_chars) return std::string{text};
  std::string out{text.substr(0, offset_after_chars(text, head_chars))};
  out += '\n';
  out.append(message_truncated_marker);
  return out;
}

std::string cap_text_with_marker(std::string_view text, size_t cap_chars, double head_share,
                                 const cut_marker_fn& marker) {
  assert(head_share >= 0.0 && head_share <= 1.0);
  const size_t total = utf8_char_count(text);
  if (total <= cap_chars) return std::string{text};

  // The marker's length depends on the counts it reports, which depend on the
  // room the marker leaves: start from the marker of "everything omitted" and
  // retry with the length actually produced until it settles.
  size_t marker_chars = utf8_char_count(marker(head_tail_cut{{}, {}, total}));
  std::optional<std::string> shorter;  // a valid result below the cap, if one was seen
  for (int attempt = 0; attempt < 8; ++attempt) {
    if (marker_chars >= cap_chars) break;
    const size_t kept = cap_chars - marker_chars;
    const auto head_chars = static_cast<size_t>(std::floor(head_share * static_cast<double>(kept)));
    const auto cut = cut_with_known_total(text, total, head_chars, kept - head_chars);
    const std::string m = marker(cut);
    const size_t m_chars = utf8_char_count(m);
    if (m_chars <= marker_chars) {
      std::string out;
      out.reserve(cut.head.size() + m.size() + cut.tail.size());
      out.append(cut.head);
      out.append(m);
      out.append(cut.tail);
      if (m_chars == marker_chars) return out;
      shorter = std::move(out);
    }
    marker_chars = m_chars;
  }
  if (shorter) return *shorter;
  // The marker does not fit the cap (a caller broke the REQUIRES): the bare head
  // is all that fits.
  return std::string{text.substr(0, offset_after_chars(text, cap_chars))};
}

std::string prompt_truncated_marker(size_t omitted_chars) {
  return "\n\n...[input truncated: " + std::to_string(omitted_chars) + " chars omitted]...\n\n";
}

std::string cap_summary_prompt(std::string_view prompt, const summary_input_caps& caps) {
  return cap_text_with_marker(prompt, caps.prompt_cap_chars, caps.prompt_head_share,
                              [](const head_tail_cut& cut) {
                                return prompt_truncated_marker(cut.omitted_chars);
                              });
}

std::optional<std::string> previous_summary_in(const std::vector<message>& middle) {
  std::optional<std::string> out;
  auto add = [&](std::string body) {
    if (!out) {
      out = std::move(body);
    } else {
      *out += "\n\n";
      *out += body;
    }
  };
  for (const auto& m : middle) {
    if (find_summary(m.content))
      add(unwrap_summary(m.content));
    else if (is_compaction_summary(m))
      add(m.content);
  }
  return out;
}

std::string build_summary_prompt(const std::vector<message>& middle,
                                 const summary_request_params& params) {
  assert(params.budget_tokens > 0);
  const auto& caps = params.caps;
  const std::string target = "target about " + std::to_string(params.budget_tokens) + " tokens";
  const auto previous = params.previous_summary ? params.previous_summary
                                                : previous_summary_in(middle);

  std::string p;
  p.append(instructions_head);
  p += "Length: ";
  p += target;
  p += ". Be dense and factual; do not pad to reach the target.\n\n";
  p.append(sections);
  p += '\n';
  p.append(rules);
  if (previous) {
    p += '\n';
    p.append(iterative_update);
  }
  if (!params.focus.empty()) {
    p += "\nFocus: the user asked this summary to concentrate on the following. Give it "
         "the most detail and keep unrelated sections brief:\n";
    p += capped_field(params.focus, caps);
    p += '\n';
  }
  if (!params.must_keep.empty()) {
    p += "\nAn earlier summary of these turns dropped the identifiers below. Keep each of "
         "them verbatim (exact spelling) where it still matters:\n";
    p += capped_field(params.must_keep, caps);
    p += '\n';
  }
  if (previous) {
    p += "\n=== PREVIOUS SUMMARY ===\n";
    p += *previous;
    p += "\n=== END OF PREVIOUS SUMMARY ===\n";
  }

  p += "\n=== ";
  p += previous ? "NEW TURNS" : "TURNS TO SUMMARIZE";
  p += " ===\n";
  size_t number = 0;
  for (const auto& m : middle) {
    // Summaries travel as the previous summary; only what else a row holds (the
    // rest of a tail message a summary was merged into) is a turn.
    std::string_view content = m.content;
    std::string around;  // owns the content when a summary is cut out of it
    bool held_summary = is_compaction_summary(m);
    if (const auto span = find_summary(m.content)) {
      around = text_around_summary(m.content, *span);
      content = around;
      held_summary = true;
    } else if (is_compaction_summary(m)) {
      content = {};
    }
    if (held_summary && content.empty() && m.tool_calls.empty()) continue;
    render_turn(p, ++number, m, content, caps);
  }
  if (number == 0) p += "(no turns)\n";
  p += "=== END OF TURNS ===\n\nWrite the summary now, ";
  p += target;
  p += ", using the sections above.\n";
  return cap_summary_prompt(p, caps);
}

chat_request build_summary_request(const std::vector<message>& middle,
                                   const summary_request_params& params) {
  chat_request req;
  req.model = params.model;
  req.purpose = llm_purpose::summary;
  message prompt;
  prompt.role = msg_role::user;
  prompt.content = build_summary_prompt(middle, params);
  req.messages.push_back(std::move(prompt));
  return req;
}

} // namespace mneme
