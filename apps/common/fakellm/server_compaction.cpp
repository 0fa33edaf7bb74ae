// Server-side compaction of the fake LLM; see server_compaction.hpp.
#include "apps/common/fakellm/server_compaction.hpp"

#include <algorithm>
#include <cassert>
#include <cctype>

#include "policies/token_estimate.hpp"

namespace mneme::fakellm {

namespace {

uint64_t fnv1a(uint64_t h, std::string_view s) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

bool contains_icase(std::string_view hay, std::string_view needle) {
  if (needle.empty() || needle.size() > hay.size()) return false;
  for (size_t i = 0; i + needle.size() <= hay.size(); ++i) {
    size_t k = 0;
    while (k < needle.size() && std::tolower(static_cast<unsigned char>(hay[i + k])) ==
                                    std::tolower(static_cast<unsigned char>(needle[k])))
      ++k;
    if (k == needle.size()) return true;
  }
  return false;
}

} // namespace

uint64_t conversation_key(const std::vector<message>& msgs) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < std::min<size_t>(2, msgs.size()); ++i) {
    h = fnv1a(h, to_string(msgs[i].role));
    h = fnv1a(h, std::string_view("\x1f", 1));
    h = fnv1a(h, msgs[i].content);
    h = fnv1a(h, std::string_view("\x1e", 1));
  }
  return h;
}

bool compacts_natively(std::string_view model, const std::vector<std::string>& patterns) {
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::string& p) { return contains_icase(model, p); });
}

server_compaction_step apply_server_compaction(const std::vector<message>& msgs,
                                               int64_t raw_tokens,
                                               std::optional<int64_t> compact_threshold,
                                               bool native, compaction_memory& memory) {
  assert(raw_tokens >= 0);
  server_compaction_step step;
  step.prompt_tokens = raw_tokens;
  if (!native || !compact_threshold) return step;
  auto key = conversation_key(msgs);
  auto it = memory.find(key);
  if (it != memory.end()) {
    if (msgs.size() < it->second.folded_messages) {
      memory.erase(it);  // the client rewrote its history: what was folded is gone
      it = memory.end();
    } else {
      std::vector<message> after(msgs.begin() + static_cast<std::ptrdiff_t>(it->second.folded_messages),
                                 msgs.end());
      step.prompt_tokens = it->second.item_tokens + estimate_messages_tokens(after);
    }
  }
  if (step.prompt_tokens < *compact_threshold) return step;
  step.compacted = true;
  step.tokens_after = std::max<int64_t>(1, step.prompt_tokens * server_compaction_keep_percent / 100);
  memory[key] = compacted_conversation{msgs.size(), step.tokens_after};
  return step;
}

} // namespace mneme::fakellm
