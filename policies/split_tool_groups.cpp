// Tool-call group analysis: one forward pass matching answers to calls, then a
// difference array marking the cut positions inside a group span.
#include "policies/split_tool_groups.hpp"

#include <cassert>
#include <string>
#include <unordered_map>
#include <utility>

namespace mneme {

tool_group_map::tool_group_map(const std::vector<message>& live)
  : owner_(live.size()), answered_(live.size()), splits_(live.size() + 1, false) {
  const std::size_t n = live.size();
  // call id -> (assistant index, position of the call in its tool_calls)
  std::unordered_map<std::string, std::pair<std::size_t, std::size_t>> open_calls;
  std::vector<std::size_t> span_end(n);
  for (std::size_t i = 0; i < n; ++i) {
    const message& m = live[i];
    span_end[i] = i;
    if (m.role == msg_role::assistant && m.has_tool_calls()) {
      answered_[i].assign(m.tool_calls.size(), false);
      for (std::size_t k = 0; k < m.tool_calls.size(); ++k)
        open_calls[m.tool_calls[k].id] = {i, k};
    } else if (m.role == msg_role::tool && !m.tool_call_id.empty()) {
      auto it = open_calls.find(m.tool_call_id);
      if (it == open_calls.end()) continue;  // orphan
      auto [a, k] = it->second;
      owner_[i] = a;
      answered_[a][k] = true;
      span_end[a] = i;  // i grows, so this is the last answer seen so far
    }
  }
  // A group [a, e] forbids every cut c with a < c <= e.
  std::vector<int> depth(n + 2, 0);
  for (std::size_t a = 0; a < n; ++a) {
    if (span_end[a] == a) continue;
    depth[a + 1] += 1;
    depth[span_end[a] + 1] -= 1;
  }
  int open = 0;
  for (std::size_t c = 0; c <= n; ++c) {
    open += depth[c];
    splits_[c] = open > 0;
  }
  // The pending group: walk back over the trailing tool rows.
  std::size_t j = n;
  while (j > 0 && live[j - 1].role == msg_role::tool) --j;
  if (j > 0 && live[j - 1].role == msg_role::assistant && live[j - 1].has_tool_calls())
    pending_ = j - 1;
}

bool tool_group_map::cut_splits_group(std::size_t c) const {
  assert(c < splits_.size());
  return c < splits_.size() && splits_[c];
}

std::optional<std::size_t> tool_group_map::owner_of(std::size_t i) const {
  assert(i < owner_.size());
  return i < owner_.size() ? owner_[i] : std::nullopt;
}

const std::vector<bool>& tool_group_map::answered(std::size_t i) const {
  assert(i < answered_.size());
  static const std::vector<bool> none;
  return i < answered_.size() ? answered_[i] : none;
}

} // namespace mneme
