// Facts found by meaning; see fact_vectors.hpp.
#include "store/fact_vectors.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "policies/fts_query.hpp"
#include "policies/rank_fusion.hpp"
#include "store/facts.hpp"

namespace mneme {

caf::expected<std::vector<fact_record>> search_facts(message_store& store,
                                                     const vector_index* index,
                                                     const fact_query& q) {
  bool vector_leg = index != nullptr && !q.text.empty() && !q.query_vector.empty()
                    && q.query_vector.size() == index->dims()
                    && parse_user_query(q.text).has_positive_clause();
  if (!vector_leg)
    return store.query_facts(q);
  if (auto err = check_fact_query(q))
    return err;
  auto leg = fusion_leg_conversations(static_cast<std::size_t>(q.limit));
  fact_query words = q;
  words.limit = std::min<int64_t>(fact_query_max_limit, static_cast<int64_t>(leg));
  auto by_words = store.query_facts(words);
  if (!by_words)
    return by_words;
  std::vector<int64_t> near_ids;
  for (const auto& h : index->nearest(q.user_id, q.query_vector, leg, vector_source::fact))
    near_ids.push_back(h.id);
  auto near = store.facts_by_id(q.user_id, near_ids);
  if (!near)
    return near;
  std::vector<std::string> word_keys, vector_keys;
  for (const auto& f : *by_words)
    word_keys.push_back(std::to_string(f.id));
  std::vector<fact_record> vector_hits;
  for (auto& f : *near)
    if (f.active || q.include_inactive) {
      vector_keys.push_back(std::to_string(f.id));
      vector_hits.push_back(std::move(f));
    }
  std::vector<fact_record> out;
  for (const auto& e :
       fuse_rankings(word_keys, vector_keys, static_cast<std::size_t>(q.limit)))
    out.push_back(e.full_text != fused_entry::absent ? (*by_words)[e.full_text]
                                                     : vector_hits[e.vector]);
  return out;
}

} // namespace mneme
