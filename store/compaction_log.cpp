// The compaction log's checks; see compaction_log.hpp.
#include "store/compaction_log.hpp"

#include <algorithm>
#include <iterator>

#include "policies/utf8_cut.hpp"
#include "store/store_errors.hpp"

namespace mneme {

namespace {

template <size_t N>
bool one_of(const char* const (&list)[N], const std::string& value) {
  return std::any_of(std::begin(list), std::end(list),
                     [&](const char* v) { return value == v; });
}

} // namespace

caf::error check_compaction_log(const compaction_log_entry& e, bool committed) {
  auto refuse = [](const std::string& why) { return bad_request("compaction log: " + why); };
  if (e.session_id.empty())
    return refuse("session id is empty");
  if (!one_of(compaction_modes, e.mode))
    return refuse("unknown mode '" + e.mode + "'");
  if (!one_of(compaction_origins, e.origin))
    return refuse("unknown origin '" + e.origin + "'");
  if (!one_of(compaction_outcomes, e.outcome))
    return refuse("unknown outcome '" + e.outcome + "'");
  if (!committed && e.outcome == "committed")
    return refuse("outcome 'committed' is written by the compaction's own commit");
  for (auto [name, v] : {std::pair{"at_ms", e.at_ms}, {"tokens_before", e.tokens_before},
                         {"tokens_after", e.tokens_after}, {"first_id", e.first_id},
                         {"last_id", e.last_id}, {"rows_replaced", e.rows_replaced},
                         {"summary_id", e.summary_id}, {"duration_ms", e.duration_ms},
                         {"summary_tokens", e.summary_tokens},
                         {"identifiers_in", e.identifiers_in},
                         {"identifiers_kept", e.identifiers_kept}})
    if (v < 0)
      return refuse(std::string{name} + " is negative");
  if (e.identifiers_kept > e.identifiers_in)
    return refuse("identifiers_kept is above identifiers_in");
  if (e.attempt < 1 || e.attempt > 2)
    return refuse("attempt must be 1 or 2");
  if (e.trigger.size() > compaction_log_max_text)
    return refuse("trigger is over 512 bytes");
  if (e.summarizer_model.size() > compaction_log_max_text)
    return refuse("summarizer_model is over 512 bytes");
  return {};
}

compaction_log_entry committed_log_entry(compaction_log_entry e, int64_t first_id,
                                         int64_t last_id, int64_t rows_replaced,
                                         int64_t summary_id) {
  e.outcome = "committed";
  e.first_id = first_id;
  e.last_id = last_id;
  e.rows_replaced = rows_replaced;
  e.summary_id = summary_id;
  return e;
}

std::string stored_detail(const compaction_log_entry& e) {
  return std::string{utf8_prefix(e.detail, compaction_log_max_text)};
}

} // namespace mneme
