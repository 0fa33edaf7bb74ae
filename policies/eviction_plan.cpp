// Tool output eviction; rules in eviction_plan.hpp.
#include "policies/eviction_plan.hpp"

#include <algorithm>

#include "policies/utf8.hpp"

namespace mneme {

namespace {

constexpr std::string_view marker_open = "[OUTPUT TRUNCATED - ";
constexpr std::string_view marker_close = " chars; recall with search]";

} // namespace

std::string eviction_marker(std::size_t original_chars) {
  return std::string{marker_open} + std::to_string(original_chars) + std::string{marker_close};
}

bool is_eviction_marker(const std::string& content) {
  const std::string_view s{content};
  if (s.size() <= marker_open.size() + marker_close.size()) return false;
  if (s.substr(0, marker_open.size()) != marker_open) return false;
  if (s.substr(s.size() - marker_close.size()) != marker_close) return false;
  const auto digits = s.substr(marker_open.size(),
                               s.size() - marker_open.size() - marker_close.size());
  for (char c : digits)
    if (c < '0' || c > '9') return false;
  return true;
}

namespace {

// Rules 1, 2 and 4 of eviction_plan.hpp; rule 3 only when `require_answered`.
std::vector<row_replacement> plan_eviction(const std::vector<message>& live, int64_t min_chars,
                                           bool require_answered) {
  std::vector<row_replacement> plan;
  if (min_chars <= 0) return plan;
  // Walking backwards, `answered` tells whether an assistant row lies later.
  bool answered = false;
  for (std::size_t k = live.size(); k > 0; --k) {
    const std::size_t i = k - 1;
    const message& m = live[i];
    if (m.role == msg_role::assistant) {
      answered = true;
      continue;
    }
    if (require_answered && !answered) continue;
    if (m.role != msg_role::tool || m.id == 0 || m.is_summary) continue;
    if (m.content.size() <= static_cast<std::size_t>(min_chars)) continue;  // bytes >= chars
    const std::size_t chars = count_code_points(m.content);
    if (chars <= static_cast<std::size_t>(min_chars)) continue;
    std::string marker = eviction_marker(chars);
    const int64_t reclaim = reclaim_of(m, marker);
    if (reclaim <= 0) continue;
    plan.push_back({i, m.id, std::move(marker), reclaim});
  }
  std::reverse(plan.begin(), plan.end());
  return plan;
}

} // namespace

std::vector<row_replacement> plan_tool_output_eviction(const std::vector<message>& live,
                                                       int64_t min_chars) {
  return plan_eviction(live, min_chars, /*require_answered=*/true);
}

std::vector<row_replacement> plan_refused_output_eviction(const std::vector<message>& live,
                                                          int64_t min_chars) {
  return plan_eviction(live, min_chars, /*require_answered=*/false);
}

} // namespace mneme
