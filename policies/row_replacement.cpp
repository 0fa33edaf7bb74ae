// Replacement rows, their application and the one-line text helpers; see
// row_replacement.hpp.
#include "policies/row_replacement.hpp"

#include <algorithm>
#include <cassert>

#include "policies/token_estimate.hpp"
#include "policies/utf8.hpp"

namespace mneme {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

} // namespace

std::ostream& operator<<(std::ostream& os, const row_replacement& r) {
  return os << "{index=" << r.index << " id=" << r.original_id
            << " reclaimed=" << r.tokens_reclaimed << " content=\"" << r.content << "\"}";
}

std::string_view to_string(replace_status s) {
  switch (s) {
    case replace_status::applied: return "applied";
    case replace_status::nothing_to_replace: return "nothing_to_replace";
    case replace_status::stale_plan: return "stale_plan";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, replace_status s) { return os << to_string(s); }

message replacement_row(const message& original, std::string content) {
  message m = original;
  m.id = 0;
  m.content = std::move(content);
  m.active = true;
  m.compacted = false;
  m.is_summary = true;
  m.replaced_first_id = original.id;
  m.replaced_last_id = original.id;
  m.token_estimate = estimate_message_tokens(m);
  return m;
}

int64_t reclaim_of(const message& original, std::string_view content) {
  message shorter;  // every field the estimate reads, without copying the long content
  shorter.content = std::string{content};
  shorter.tool_call_id = original.tool_call_id;
  shorter.tool_name = original.tool_name;
  shorter.tool_calls = original.tool_calls;
  const int64_t before = original.token_estimate > 0 ? original.token_estimate
                                                     : estimate_message_tokens(original);
  return before - estimate_message_tokens(shorter);
}

replaced_transcript apply_replacements(const std::vector<message>& live,
                                       const std::vector<row_replacement>& plan) {
  replaced_transcript out;
  out.live = live;
  if (plan.empty()) return out;
  for (std::size_t k = 0; k < plan.size(); ++k) {
    const auto& r = plan[k];
    const bool ordered = k == 0 || plan[k - 1].index < r.index;
    if (!ordered || r.index >= live.size() || r.original_id == 0
        || live[r.index].id != r.original_id) {
      out.status = replace_status::stale_plan;
      return out;
    }
  }
  for (const auto& r : plan) {
    out.live[r.index] = replacement_row(live[r.index], r.content);
    if (r.drop_tool_calls) {
      out.live[r.index].tool_calls.clear();
      out.live[r.index].token_estimate = estimate_message_tokens(out.live[r.index]);
    }
    out.archived_ids.push_back(r.original_id);
  }
  out.status = replace_status::applied;
  return out;
}

std::string one_line_excerpt(std::string_view text, std::size_t max_chars) {
  assert(max_chars >= 1);
  std::string flat;
  flat.reserve(std::min(text.size(), max_chars * 4 + 4));
  bool pending_space = false;
  std::size_t chars = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    if (is_space(text[pos])) {
      pending_space = !flat.empty();
      ++pos;
      continue;
    }
    if (pending_space) {
      flat.push_back(' ');
      ++chars;
      pending_space = false;
    }
    const std::size_t start = pos;
    next_code_point(text, pos);
    flat.append(text.substr(start, pos - start));
    ++chars;
    if (chars > max_chars) break;  // enough to know it must be cut
  }
  if (chars <= max_chars) return flat;
  flat.resize(byte_offset_of_code_point(flat, max_chars - 1));
  while (!flat.empty() && flat.back() == ' ') flat.pop_back();
  return flat + "…";
}

std::string first_line_excerpt(std::string_view text, std::size_t max_chars) {
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    const auto line = text.substr(begin, end - begin);
    for (char c : line)
      if (!is_space(c)) return one_line_excerpt(line, max_chars);
    begin = end + 1;
  }
  return {};
}

std::string with_thousands(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return n < 0 ? "-" + out : out;
}

} // namespace mneme
