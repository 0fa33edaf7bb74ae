// The JSON of a session's compactions; see compactions_json.hpp.
#include "apps/common/api/compactions_json.hpp"

#include <map>

namespace mneme::api {

namespace {

// One compaction as its summary row says it: the row, the ids it replaced, its size,
// when, and whether it is still live (archived: a later compaction replaced it).
json summary_row_json(const message& summary) {
  auto row = to_json(summary);
  json out{{"created_at_ms", summary.timestamp_ms}};
  for (const char* field :
       {"id", "replaced_first_id", "replaced_last_id", "token_estimate", "state"})
    out[field] = row[field];
  return out;
}

} // namespace

json to_json(const compaction_log_entry& e) {
  json out{{"log_id", e.id},
           {"at_ms", e.at_ms},
           {"trigger", e.trigger},
           {"origin", e.origin},
           {"mode", e.mode},
           {"outcome", e.outcome},
           {"tokens_before", e.tokens_before},
           {"tokens_after", e.tokens_after},
           {"first_id", e.first_id},
           {"last_id", e.last_id},
           {"rows_replaced", e.rows_replaced},
           {"summary_id", e.summary_id},
           {"summarizer_model", e.summarizer_model},
           {"duration_ms", e.duration_ms},
           {"summary_tokens", e.summary_tokens},
           {"identifiers_in", e.identifiers_in},
           {"identifiers_kept", e.identifiers_kept},
           {"attempt", e.attempt},
           {"detail", e.detail}};
  if (e.identifiers_in > 0)
    out["retention"] = static_cast<double>(e.identifiers_kept)
                       / static_cast<double>(e.identifiers_in);
  else
    out["retention"] = nullptr;
  return out;
}

json compactions_to_json(const std::string& session_id, const std::vector<message>& rows,
                         const std::vector<compaction_log_entry>& log) {
  std::map<int64_t, const compaction_log_entry*> by_summary;
  auto attempts = json::array();
  for (const auto& e : log) {
    attempts.push_back(to_json(e));
    if (e.outcome == "committed" && e.summary_id > 0)
      by_summary[e.summary_id] = &e;
  }
  auto list = json::array();
  for (const auto& m : rows) {
    if (!is_compaction_summary(m))
      continue;
    auto one = summary_row_json(m);
    auto logged = by_summary.find(m.id);
    one["logged"] = logged != by_summary.end();
    if (logged != by_summary.end()) {
      const json fields = to_json(*logged->second); // outlives the loop over its items
      for (const auto& [field, value] : fields.items())
        one[field] = value;
    }
    list.push_back(std::move(one));
  }
  return {{"session_id", session_id},
          {"compactions", std::move(list)},
          {"attempts", std::move(attempts)}};
}

} // namespace mneme::api
