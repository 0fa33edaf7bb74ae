// What a compaction commit shares, in place (sqlite_store_compaction.cpp) or continuing
// in a child session (sqlite_store_child.cpp): the checks that the summary row is
// acceptable and that the archive ids are a contiguous run of the live context (`what`
// names the operation at the head of each error: "compaction", "child session"), and
// the summary row it inserts. Pure functions of values; errors are errc::bad_request.
// Thread: the owner of the sqlite_store.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "caf/error.hpp"
#include "caf/expected.hpp"
#include "store/store_errors.hpp"
#include "store/store_params.hpp"
#include "messages/storage_types.hpp"

namespace mneme {

// The archive ids are non-empty and the summary is a user/assistant row of this
// session with text of at most max_content_bytes.
inline caf::error check_compaction_summary(std::string_view what, const compaction_commit& c,
                                           const store_params& params) {
  auto fail = [what](const std::string& why) {
    return bad_request(std::string{what} + ": " + why);
  };
  if (c.archive_ids.empty())
    return fail("archive_ids is empty (nothing to compact)");
  if (c.summary.role != msg_role::user && c.summary.role != msg_role::assistant)
    return fail("a summary's role is user or assistant");
  if (c.summary.content.empty())
    return fail("the summary text is empty");
  if (!c.summary.session_id.empty() && c.summary.session_id != c.session_id)
    return fail("the summary names another session");
  if (c.summary.content.size() > static_cast<size_t>(params.max_content_bytes))
    return fail("the summary exceeds max_content_bytes");
  return {};
}

// The summary row a valid commit inserts into session `session_id`: the commit's
// summary as a new live row (id 0, not compacted), marked is_summary, replacing the
// archive ids' range. REQUIRES: !c.archive_ids.empty().
inline message summary_row(const compaction_commit& c, const std::string& session_id) {
  message summary = c.summary;
  summary.id = 0;
  summary.session_id = session_id;
  summary.active = true;
  summary.compacted = false;
  summary.is_summary = true;
  auto [lo, hi] = std::minmax_element(c.archive_ids.begin(), c.archive_ids.end());
  summary.replaced_first_id = *lo;
  summary.replaced_last_id = *hi;
  return summary;
}

// The index in `live` (rows with an `id`, in live-context order) where the archive
// ids start as a contiguous run, in order.
// REQUIRES: !ids.empty() (check_compaction_summary refuses an empty list first).
template <class Row>
caf::expected<size_t> locate_archive_run(std::string_view what, const std::vector<Row>& live,
                                         const std::vector<int64_t>& ids,
                                         const std::string& session_id) {
  auto fail = [what](const std::string& why) {
    return bad_request(std::string{what} + ": " + why);
  };
  auto first = std::find_if(live.begin(), live.end(),
                            [&](const Row& r) { return r.id == ids.front(); });
  if (first == live.end())
    return fail("row " + std::to_string(ids.front()) + " is not a live row of session '"
                + session_id + "'");
  auto start = static_cast<size_t>(first - live.begin());
  if (start + ids.size() > live.size())
    return fail("the archive ids run past the end of the live context");
  for (size_t i = 0; i < ids.size(); ++i)
    if (live[start + i].id != ids[i])
      return fail("archive ids are not a contiguous run of the live context: position "
                  + std::to_string(i) + " names row " + std::to_string(ids[i])
                  + ", the live context has row " + std::to_string(live[start + i].id));
  return start;
}

} // namespace mneme
