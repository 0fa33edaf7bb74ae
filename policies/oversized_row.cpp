// Rows that cannot fit the window; rules in oversized_row.hpp.
#include "policies/oversized_row.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "policies/token_estimate.hpp"
#include "policies/utf8.hpp"

namespace mneme {

namespace {

constexpr std::string_view marker_open = "[MESSAGE TRUNCATED - ";

int64_t tokens_of(const message& m) {
  return m.token_estimate > 0 ? m.token_estimate : estimate_message_tokens(m);
}

} // namespace

int64_t max_row_tokens(int64_t window, double share) {
  if (window <= 0 || !(share > 0.0) || share > 1.0)
    return 0;
  return static_cast<int64_t>(std::floor(static_cast<double>(window) * share));
}

bool row_cannot_fit(int64_t tokens, int64_t limit) {
  return limit > 0 && tokens > limit;
}

std::size_t oversized_excerpt_chars(int64_t limit) {
  if (limit <= 0)
    return 0;
  return std::min<std::size_t>(k_oversized_excerpt_max_chars, static_cast<std::size_t>(limit / 2));
}

std::string oversized_row_marker(const message& m, std::size_t excerpt_chars) {
  const std::string_view text{m.content};
  const std::size_t chars = count_code_points(text);
  std::string out{marker_open};
  out += with_thousands(static_cast<int64_t>(chars)) + " chars";
  if (!m.tool_calls.empty())
    out += ", " + with_thousands(static_cast<int64_t>(m.tool_calls.size())) + " tool calls";
  out += "; too large for the context window, recall with search]";
  if (chars == 0 || excerpt_chars == 0)
    return out;
  if (chars <= excerpt_chars) { // the content fits; the size was elsewhere (tool calls)
    out += "\n";
    out += text;
    return out;
  }
  const std::size_t head = excerpt_chars * 2 / 3;
  const std::size_t tail = excerpt_chars - head;
  out += "\n";
  out += text.substr(0, byte_offset_of_code_point(text, head));
  out += "\n...[" + with_thousands(static_cast<int64_t>(chars - head - tail))
         + " chars omitted]...\n";
  out += text.substr(byte_offset_of_code_point(text, chars - tail));
  return out;
}

bool is_oversized_row_marker(const std::string& content) {
  return std::string_view{content}.substr(0, marker_open.size()) == marker_open;
}

std::vector<row_replacement> plan_oversized_rows(const std::vector<message>& live, int64_t limit) {
  std::vector<row_replacement> plan;
  if (limit <= 0)
    return plan;
  const std::size_t excerpt = oversized_excerpt_chars(limit);
  for (std::size_t i = 0; i < live.size(); ++i) {
    const message& m = live[i];
    if (m.id == 0 || m.is_summary)
      continue;
    const int64_t before = tokens_of(m);
    if (!row_cannot_fit(before, limit))
      continue;
    row_replacement r;
    r.index = i;
    r.original_id = m.id;
    r.content = oversized_row_marker(m, excerpt);
    r.drop_tool_calls = !m.tool_calls.empty();
    message shorter; // what the estimate reads of the marker row
    shorter.role = m.role;
    shorter.content = r.content;
    shorter.tool_call_id = m.tool_call_id;
    shorter.tool_name = m.tool_name;
    if (!r.drop_tool_calls)
      shorter.tool_calls = m.tool_calls;
    r.tokens_reclaimed = before - estimate_message_tokens(shorter);
    if (r.tokens_reclaimed <= 0)
      continue;
    plan.push_back(std::move(r));
  }
  return plan;
}

} // namespace mneme
