// The rows a reset copies; rules in reset_plan.hpp.
#include "policies/reset_plan.hpp"

#include <algorithm>
#include <cassert>
#include <string>

#include "policies/oversized_row.hpp"
#include "policies/token_estimate.hpp"

namespace mneme {

namespace {

bool fits(const message& m, int64_t limit) {
  auto tokens = m.token_estimate > 0 ? m.token_estimate : estimate_message_tokens(m);
  return !row_cannot_fit(tokens, limit);
}

bool answers_a_call_of(const message& tool, const message& assistant) {
  return std::any_of(assistant.tool_calls.begin(), assistant.tool_calls.end(),
                     [&](const tool_call& c) { return c.id == tool.tool_call_id; });
}

} // namespace

std::vector<std::size_t> plan_reset_copy(const std::vector<message>& live, int head_count,
                                         int64_t max_row_tokens) {
  assert(head_count >= 0);
  std::size_t head_end = 0;
  if (!live.empty() && live.front().role == msg_role::system)
    head_end = 1;
  head_end = std::min(live.size(), head_end + static_cast<std::size_t>(std::max(0, head_count)));
  while (head_end < live.size() && live[head_end].role == msg_role::tool)
    ++head_end;
  std::vector<std::size_t> out;
  std::vector<const message*> left_behind; // assistant rows with calls not copied
  for (std::size_t i = 0; i < head_end; ++i) {
    const message& m = live[i];
    if (!fits(m, max_row_tokens)) {
      if (m.role == msg_role::assistant && !m.tool_calls.empty())
        left_behind.push_back(&m);
      continue;
    }
    if (m.role == msg_role::tool
        && std::any_of(left_behind.begin(), left_behind.end(),
                       [&](const message* a) { return answers_a_call_of(m, *a); }))
      continue;
    out.push_back(i);
  }
  for (std::size_t k = live.size(); k > head_end; --k) {
    const message& m = live[k - 1];
    if (!m.is_summary)
      continue;
    if (fits(m, max_row_tokens))
      out.push_back(k - 1);
    break;
  }
  return out;
}

} // namespace mneme
