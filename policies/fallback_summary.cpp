// The local fallback summary; see fallback_summary.hpp for the format and limits.
#include "policies/fallback_summary.hpp"

#include <algorithm>
#include <cassert>
#include <string_view>

#include "policies/summary_markers.hpp"
#include "policies/summary_request.hpp"
#include "policies/token_estimate.hpp"

namespace mneme {

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Runs of ASCII whitespace become one space; leading and trailing ones go.
// Safe on UTF-8: ASCII bytes never occur inside a multibyte sequence.
std::string collapse_whitespace(std::string_view s) {
  std::string out(s.size(), '\0');
  size_t n = 0;
  bool pending_space = false;
  for (char c : s) {
    if (is_space(c)) {
      pending_space = n > 0;
      continue;
    }
    if (pending_space) out[n++] = ' ';
    pending_space = false;
    out[n++] = c;
  }
  out.resize(n);
  return out;
}

std::string shortened(std::string_view text, size_t cap, size_t head, size_t tail) {
  std::string collapsed = collapse_whitespace(text);
  if (collapsed.size() <= cap) return collapsed;  // bytes >= characters
  // Collapse again after cutting: the truncation marker brings newlines.
  return collapse_whitespace(truncate_long_text(collapsed, cap, head, tail));
}

struct line_builder {
  const fallback_summary_limits& limits;
  std::string text;
  // Character offsets [first, second) of each message line within text.
  std::vector<std::pair<size_t, size_t>> line_chars;
  size_t chars = 0;

  void add_line(std::string_view label, std::string_view body) {
    text += '\n';
    chars += 1;
    const size_t start = chars;
    text.append(label);
    text += body.empty() ? ":" : ": ";
    text.append(body);
    chars += utf8_char_count(label) + (body.empty() ? 1 : 2) + utf8_char_count(body);
    line_chars.emplace_back(start, chars);
  }

  void add_summary(std::string_view body) {
    add_line("earlier summary", shortened(body, limits.summary_cap_chars,
                                          limits.summary_head_chars, limits.summary_tail_chars));
  }

  void add_message(const message& m, std::string_view content) {
    std::string label{to_string(m.role)};
    if (m.role == msg_role::tool && !m.tool_name.empty()) {
      label += ' ';
      label += m.tool_name;
    }
    std::string body{content};
    if (!m.tool_calls.empty()) {
      body += body.empty() ? "[tool calls: " : " [tool calls: ";
      for (size_t i = 0; i < m.tool_calls.size(); ++i) {
        if (i > 0) body += "; ";
        body += m.tool_calls[i].name;
        body += '(';
        body += m.tool_calls[i].arguments;
        body += ')';
      }
      body += ']';
    }
    add_line(label, shortened(body, limits.message_cap_chars, limits.message_head_chars,
                              limits.message_tail_chars));
  }
};

std::string header(size_t message_count) {
  if (message_count == 0) return "Local fallback summary: no messages were compacted.";
  return "Local fallback summary (the summarizer was unavailable): the "
         + std::to_string(message_count) + " compacted "
         + (message_count == 1 ? "message" : "messages")
         + " as \"role: content\" lines, long ones shortened.";
}

} // namespace

std::string build_fallback_summary(const std::vector<message>& middle,
                                   const fallback_summary_limits& limits) {
  assert(limits.message_head_chars + limits.message_tail_chars <= limits.message_cap_chars);
  assert(limits.summary_head_chars + limits.summary_tail_chars <= limits.summary_cap_chars);
  assert(limits.cap_chars >= 100);

  line_builder b{limits, header(middle.size()), {}, 0};
  b.chars = utf8_char_count(b.text);
  for (const auto& m : middle) {
    if (const auto span = find_summary(m.content)) {
      b.add_summary(unwrap_summary(m.content));
      const std::string rest = text_around_summary(m.content, *span);
      if (!rest.empty() || m.has_tool_calls()) b.add_message(m, rest);
    } else if (is_compaction_summary(m)) {
      b.add_summary(m.content);
    } else {
      b.add_message(m, m.content);
    }
  }

  const size_t total = b.chars;
  const auto& lines = b.line_chars;
  return cap_text_with_marker(b.text, limits.cap_chars, limits.head_share,
                              [&](const head_tail_cut& cut) {
                                const size_t omitted_begin = utf8_char_count(cut.head);
                                const size_t omitted_end = total - utf8_char_count(cut.tail);
                                size_t whole = 0;
                                for (const auto& [first, last] : lines)
                                  if (first >= omitted_begin && last <= omitted_end) ++whole;
                                return "\n[... " + std::to_string(cut.omitted_chars)
                                       + " chars omitted, including " + std::to_string(whole)
                                       + " whole messages ...]\n";
                              });
}

std::string build_fallback_summary_within(const std::vector<message>& middle,
                                          int64_t budget_tokens,
                                          fallback_summary_limits limits) {
  assert(budget_tokens >= 1);
  constexpr size_t min_cap = 100;
  const int64_t budget = std::max<int64_t>(1, budget_tokens);
  const auto by_budget = static_cast<uint64_t>(budget) * latin_chars_per_token;
  limits.cap_chars = std::max<size_t>(
    min_cap, static_cast<size_t>(std::min<uint64_t>(limits.cap_chars, by_budget)));
  std::string text = build_fallback_summary(middle, limits);
  // CJK text costs up to 4x more tokens per character: shrink the cap in proportion.
  for (int round = 0; round < 8; ++round) {
    const int64_t tokens = estimate_text_tokens(text);
    if (tokens <= budget || limits.cap_chars <= min_cap) break;
    const auto scaled = static_cast<size_t>(static_cast<double>(limits.cap_chars)
                                            * static_cast<double>(budget)
                                            / static_cast<double>(tokens));
    limits.cap_chars = std::max(min_cap, std::min(scaled, limits.cap_chars - 1));
    text = build_fallback_summary(middle, limits);
  }
  return text;
}

} // namespace mneme
