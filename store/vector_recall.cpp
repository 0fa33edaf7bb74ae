// The shared legs of a recall search; see vector_recall.hpp.
#include "store/vector_recall.hpp"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "policies/rank_fusion.hpp"
#include "policies/utf8_cut.hpp"

namespace mneme {

recall_legs plan_recall_legs(const recall_request& req, const vector_index* index,
                             recall_result& result) {
  recall_legs legs;
  auto wanted = static_cast<std::size_t>(std::max<int32_t>(1, req.max_sessions));
  legs.full_text_conversations = wanted;
  result.mode = recall_mode::fts;
  result.vector_skipped = vector_skip::none;
  if (req.mode == recall_mode::fts)
    return legs;
  if (index == nullptr || req.query_vector.empty()) {
    result.vector_skipped = vector_skip::embeddings_off;
    return legs;
  }
  if (req.query_vector.size() != index->dims()) {
    result.vector_skipped = vector_skip::provider_failed;
    return legs;
  }
  legs.vector = true;
  if (req.mode == recall_mode::vector) {
    result.mode = recall_mode::vector;
    legs.full_text = false;
    legs.full_text_conversations = 0;
    legs.vector_conversations = wanted;
    return legs;
  }
  result.mode = recall_mode::hybrid;
  legs.full_text_conversations = fusion_leg_conversations(wanted);
  legs.vector_conversations = legs.full_text_conversations;
  return legs;
}

std::string vector_snippet(std::string_view text) {
  auto head = utf8_prefix(text, vector_snippet_bytes);
  std::string out{head};
  if (head.size() < text.size())
    out += "…";
  return out;
}

caf::expected<std::vector<recall_candidate>>
vector_leg(const vector_index& index, const recall_request& req, std::size_t conversations,
           const vector_rows_reader& rows_of, const conversation_reader& conversation_of) {
  std::vector<recall_candidate> out;
  if (conversations == 0)
    return out;
  auto near = index.nearest(req.user_id, req.query_vector, vector_leg_rows(conversations),
                            vector_source::message);
  if (near.empty())
    return out;
  std::vector<int64_t> ids;
  ids.reserve(near.size());
  for (auto& h : near)
    ids.push_back(h.id);
  auto rows = rows_of(ids);
  if (!rows)
    return std::move(rows.error());
  std::unordered_map<int64_t, vector_row*> by_id;
  for (auto& r : *rows)
    by_id.emplace(r.id, &r);
  std::unordered_set<std::string> seen;
  for (auto& h : near) {
    if (out.size() >= conversations)
      break;
    auto it = by_id.find(h.id);
    if (it == by_id.end())
      continue; // not in this snapshot
    auto& row = *it->second;
    if (row.user_id != req.user_id)
      continue; // never another tenant's row, whatever the index holds
    if (!(req.include_inactive || row.active || row.compacted))
      continue; // rolled back
    auto conversation = conversation_of(row.session_id);
    if (!conversation)
      return std::move(conversation.error());
    if (!seen.insert(*conversation).second)
      continue;
    recall_candidate c;
    c.id = row.id;
    c.session_id = row.session_id;
    c.conversation_id = std::move(*conversation);
    c.score = h.distance;
    c.snippet = vector_snippet(row.text);
    c.from_vector = true;
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<recall_candidate> merge_recall_legs(std::vector<recall_candidate> full_text,
                                                std::vector<recall_candidate> vector,
                                                const recall_legs& legs,
                                                std::size_t max_sessions) {
  if (!legs.vector || !legs.full_text) {
    auto& only = legs.vector ? vector : full_text;
    if (only.size() > max_sessions)
      only.resize(max_sessions);
    return std::move(only);
  }
  std::vector<std::string> text_keys, vector_keys;
  for (auto& c : full_text)
    text_keys.push_back(c.conversation_id);
  for (auto& c : vector)
    vector_keys.push_back(c.conversation_id);
  std::vector<recall_candidate> out;
  for (auto& e : fuse_rankings(text_keys, vector_keys, max_sessions))
    out.push_back(e.full_text != fused_entry::absent ? std::move(full_text[e.full_text])
                                                     : std::move(vector[e.vector]));
  return out;
}

} // namespace mneme
