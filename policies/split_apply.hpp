// Applies a compaction plan (policies/split_plan.hpp) to the live transcript:
// the new live context and the ids the store must archive in the same
// transaction. Pure, standard library only, any thread. Called by the session
// actor once the summary text is known, and by the store's tests.
//
// The new live transcript is, in order:
//   head rows (minus dropped orphans, plus synthetic answers),
//   the summary message        (unless merged),
//   tail rows  (minus dropped orphans, plus synthetic answers; the first kept
//               tail row replaced by the merged row when the plan merges),
//   rows appended after planning (live[transcript_size..]), verbatim.
// New rows carry id 0 and must be inserted by the store in this order:
//   - the summary: role = plan.summary_role, is_summary, content = summary
//     text, replaced_first_id/replaced_last_id = min/max of the middle ids,
//     timestamp of the last middle row;
//   - a merged row: a copy of the first kept tail row with the summary text,
//     a blank line, then its own content; is_summary, and a replaced range
//     that also covers the copied row, whose original is archived (nothing is
//     rewritten in place, nothing deleted);
//   - a synthetic answer: role tool, content k_no_result_recorded, the call's
//     id and name, the assistant's timestamp.
// token_estimate of new rows: 0 for the summary and synthetic answers, the
// copied row's estimate for a merged row; the caller re-estimates rows with
// id 0 (policies own no estimator here).
// The replaced range is a bound for provenance; archived_ids is the exact set.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "messages/transcript.hpp"
#include "policies/split_plan.hpp"

namespace mneme {

enum class apply_status : uint8_t {
  applied,
  nothing_to_compact,  // the plan's outcome is not compact: live is returned unchanged
  stale_plan,          // live no longer starts with the rows the plan was made for
};

std::string_view to_string(apply_status s);
std::ostream& operator<<(std::ostream& os, apply_status s);

struct compacted_transcript {
  apply_status status = apply_status::nothing_to_compact;
  std::vector<message> live;          // the new live context (the input, unless applied)
  // Rows leaving the live context: the middle ids in order, then dropped
  // orphans, then the merge target. The store flips them to active=0,
  // compacted=1 in the transaction that inserts the id-0 rows of `live`.
  std::vector<int64_t> archived_ids;
  std::size_t summary_index = 0;      // where the summary (or merged row) sits in live
};

// Applies `plan` to `live`, which may have grown since planning (appends
// after the tail are kept) but must otherwise be unchanged: the middle rows
// and every row an orphan fix names must still carry the ids the plan saw.
// A plan whose outcome is not compact, or a stale plan, returns live
// unchanged with that status.
compacted_transcript apply_plan(const std::vector<message>& live, const compaction_plan& plan,
                                std::string_view summary_text);

} // namespace mneme
