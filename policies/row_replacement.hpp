// Replacing the live copy of single rows without losing the original (SPEC §1,
// §6): the shared mechanism of proactive pruning, tool output eviction and
// skill unloading. Pure, standard library only, any thread; plans are built by
// policies/prune_plan, policies/eviction_plan and policies/skills_index and
// applied here by the session actor once the store has committed them.
//
// How a replacement is stored (nothing is rewritten in place, nothing deleted):
//   - the replacement is a NEW row (id 0 until inserted) built by
//     replacement_row: a copy of the original (role, tool_call_id, tool_name,
//     tool_calls, timestamp, session) whose content is the short text, with
//     is_summary = 1 and replaced_first_id = replaced_last_id = the original's
//     id (provenance: it can be expanded back to its original);
//   - the original row is archived (active = 0, compacted = 1) in the SAME
//     transaction, so it stays searchable by recall;
//   - the new row takes the original's place in the live order (the store's
//     `position` of the archived row), exactly like a summary of a one-row
//     middle. A tool row keeps its tool_call_id, so call/result pairing holds.
// Failure (SPEC §5.5): the caller swaps its in-memory transcript only after the
// store acknowledged the commit; if the commit fails the session stays as it
// was and the plan is dropped.
//
// Invariants of a replaced_transcript with status applied:
//   1. live has the same length as the input and the same roles, tool_call_ids
//      and tool_calls at every index, except that a replacement planned with
//      drop_tool_calls has none.
//   2. archived_ids are the original ids of the replaced rows, in index order.
//   3. every replaced row has id 0, is_summary, and a one-row provenance range.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "messages/transcript.hpp"

namespace mneme {

// One planned replacement of a live row.
struct row_replacement {
  std::size_t index = 0;         // position in the live transcript when planned
  int64_t original_id = 0;       // id of the row at `index`; never 0
  std::string content;           // the new live content (one line)
  int64_t tokens_reclaimed = 0;  // estimate(original) - estimate(replacement), > 0
  // The replacement carries no tool calls (policies/oversized_row.hpp: an assistant
  // row whose calls alone cannot fit the window). False for every other plan.
  bool drop_tool_calls = false;

  friend bool operator==(const row_replacement& a, const row_replacement& b) {
    return a.index == b.index && a.original_id == b.original_id && a.content == b.content
           && a.tokens_reclaimed == b.tokens_reclaimed && a.drop_tool_calls == b.drop_tool_calls;
  }
};

std::ostream& operator<<(std::ostream& os, const row_replacement& r);

enum class replace_status : uint8_t {
  applied,
  nothing_to_replace,  // empty plan: live returned unchanged
  stale_plan,          // a planned index is past the end or names another id now
};

std::string_view to_string(replace_status s);
std::ostream& operator<<(std::ostream& os, replace_status s);

struct replaced_transcript {
  replace_status status = replace_status::nothing_to_replace;
  std::vector<message> live;          // the new live context (the input unless applied)
  std::vector<int64_t> archived_ids;  // originals to archive in the insert's transaction
};

// The new live row standing for `original` (see the header comment).
// token_estimate is the estimate of the new row.
message replacement_row(const message& original, std::string content);

// Planned reclaim of replacing `original`'s content by `content`: the
// original's token_estimate (the local estimate when it is not filled in,
// i.e. <= 0) minus the local estimate (policies/token_estimate) of the
// replacement; may be <= 0 when the text is not shorter. Reads each long
// content at most once.
int64_t reclaim_of(const message& original, std::string_view content);

// Applies `plan` (index order, at most one replacement per index) to `live`,
// which may have grown since planning but must still hold the planned ids at
// the planned indices; otherwise stale_plan and live unchanged.
replaced_transcript apply_replacements(const std::vector<message>& live,
                                       const std::vector<row_replacement>& plan);

// `text` on one line: runs of whitespace (incl. newlines) become one space,
// leading/trailing whitespace dropped; longer than max_chars code points, it
// keeps the first max_chars - 1 and ends with "…". UTF-8 safe.
// REQUIRES: max_chars >= 1.
std::string one_line_excerpt(std::string_view text, std::size_t max_chars);

// The first line of `text` holding a non-space character, as one_line_excerpt.
std::string first_line_excerpt(std::string_view text, std::size_t max_chars);

// 12345 -> "12,345": the sizes written into replacement lines.
std::string with_thousands(int64_t n);

} // namespace mneme
