// Reciprocal rank fusion; see rank_fusion.hpp.
#include "policies/rank_fusion.hpp"

#include <algorithm>
#include <cassert>
#include <map>

namespace mneme {

std::size_t fusion_leg_conversations(std::size_t max_sessions) {
  assert(max_sessions >= 1);
  return std::max<std::size_t>(10, 3 * max_sessions);
}

std::size_t vector_leg_rows(std::size_t conversations) { return 4 * conversations; }

std::vector<fused_entry> fuse_rankings(const std::vector<std::string>& full_text,
                                       const std::vector<std::string>& vector,
                                       std::size_t limit, double k) {
  struct work {
    fused_entry e;
    std::size_t best_rank = fused_entry::absent;
    const std::string* key = nullptr;
  };
  std::map<std::string, work> by_key;
  auto add = [&](const std::vector<std::string>& ranking, bool is_full_text) {
    for (std::size_t i = 0; i < ranking.size(); ++i) {
      auto& w = by_key[ranking[i]];
      auto& slot = is_full_text ? w.e.full_text : w.e.vector;
      if (slot != fused_entry::absent)
        continue; // a repeated key counts at its first place
      slot = i;
      w.e.score += 1.0 / (k + static_cast<double>(i + 1));
      w.best_rank = std::min(w.best_rank, i);
    }
  };
  add(full_text, true);
  add(vector, false);
  std::vector<work> all;
  all.reserve(by_key.size());
  for (auto& [key, w] : by_key) {
    w.key = &key;
    all.push_back(w);
  }
  std::sort(all.begin(), all.end(), [](const work& a, const work& b) {
    if (a.e.score != b.e.score)
      return a.e.score > b.e.score;
    if (a.best_rank != b.best_rank)
      return a.best_rank < b.best_rank;
    bool a_text = a.e.full_text != fused_entry::absent;
    bool b_text = b.e.full_text != fused_entry::absent;
    if (a_text != b_text)
      return a_text;
    return *a.key < *b.key;
  });
  std::vector<fused_entry> out;
  for (std::size_t i = 0; i < all.size() && i < limit; ++i)
    out.push_back(all[i].e);
  return out;
}

} // namespace mneme
