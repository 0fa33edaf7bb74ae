// Conversation roots and the clamped result limit; see recall_grouping.hpp.
#include "policies/recall_grouping.hpp"

#include <cassert>
#include <unordered_set>

namespace mneme {

std::string conversation_root(const std::string& session_id,
                              const std::function<std::optional<std::string>(
                                const std::string&)>& parent_of) {
  std::string at = session_id;
  std::unordered_set<std::string> visited{at};
  for (int depth = 0; depth < recall_max_lineage_depth; ++depth) {
    auto parent = parent_of(at);
    if (!parent || parent->empty() || !visited.insert(*parent).second) return at;
    at = std::move(*parent);
  }
  return at;
}

const std::string& conversation_cache::root_of(const std::string& session_id) {
  if (auto i = roots_.find(session_id); i != roots_.end())
    return i->second;
  return roots_.emplace(session_id, conversation_root(session_id, parent_of_)).first->second;
}

recall_limit clamp_recall_limit(int64_t requested, int32_t max_sessions) {
  assert(requested >= 1 && max_sessions >= 1);
  if (requested > max_sessions) return {max_sessions, true};
  return {static_cast<int32_t>(requested), false};
}

} // namespace mneme
