// The plan of one compaction (SPEC §3): where the live transcript is cut into
// head / middle / tail, what the summary message looks like, and which
// pre-existing tool-call orphans the kept context must be cleaned of.
// Produced by plan_compaction / plan_local_compaction (policies/split.hpp),
// consumed by apply_plan (policies/split_apply.hpp), the summary request builder
// and the session actor. Plain values, standard library only; a plan is
// immutable once built and may be copied to any thread.
//
// Index conventions (n = transcript_size, the transcript length at planning):
//   head   = [0, head_end)           kept verbatim (minus dropped orphans)
//   middle = [head_end, tail_begin)  summarized and archived
//   tail   = [tail_begin, n)         kept verbatim (minus dropped orphans)
// Invariants of a plan with outcome == compact:
//   1. head_end < tail_begin <= transcript_size.
//   2. middle_ids are the ids of the middle rows, in transcript order, all != 0.
//   3. No assistant row and any tool row answering it are on different sides
//      of head_end or of tail_begin.
//   4. orphan_fixes only name rows of the head or the tail, in index order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "messages/transcript.hpp"

namespace mneme {

// Why a plan does (or does not) compact anything.
enum class split_outcome : uint8_t {
  compact,                   // the middle is non-empty: summarize it
  middle_empty,              // head and tail cover everything: an ineffective compaction
  center_out_of_range,       // local compaction: center_index >= transcript size
  center_in_protected_head,  // local compaction: center lies in the protected head
  center_in_protected_tail,  // local compaction: center lies in the protected tail
  middle_not_stored,         // a row the plan would archive has id 0 (not stored yet)
};

std::string_view to_string(split_outcome o);
std::ostream& operator<<(std::ostream& os, split_outcome o);
// The outcome as a sentence a user reads (API errors, CLI), e.g. why a local
// compaction around a message cannot run.
std::string_view describe(split_outcome o);

// One repair of the kept context. Nothing is deleted from the database: a
// dropped row is archived with the middle; an added answer is a new row.
struct orphan_fix {
  enum class kind : uint8_t {
    // A kept tool row whose call is in no kept assistant message: it leaves the
    // live context and is archived (active=0, compacted=1), still searchable.
    drop_orphan_result,
    // A kept assistant call that no tool row answers (and that is not still
    // pending at the end of the transcript): a synthetic tool row whose
    // content is k_no_result_recorded is inserted after `insert_after`.
    answer_unanswered_call,
  };
  kind what = kind::drop_orphan_result;
  std::size_t index = 0;         // drop: the tool row; answer: the assistant row
  int64_t message_id = 0;        // id of the row at `index`
  std::string call_id;           // the tool_call_id concerned
  std::string tool_name;         // answer: the call's function name
  std::size_t insert_after = 0;  // answer: the synthetic row goes right after this index

  friend bool operator==(const orphan_fix& a, const orphan_fix& b) {
    return a.what == b.what && a.index == b.index && a.message_id == b.message_id
           && a.call_id == b.call_id && a.tool_name == b.tool_name
           && a.insert_after == b.insert_after;
  }
};

// Content of the synthetic answer to a call that never got one.
inline constexpr std::string_view k_no_result_recorded = "[no result recorded]";

std::string_view to_string(orphan_fix::kind k);
std::ostream& operator<<(std::ostream& os, orphan_fix::kind k);
std::ostream& operator<<(std::ostream& os, const orphan_fix& f);

struct compaction_plan {
  split_outcome outcome = split_outcome::middle_empty;
  std::size_t transcript_size = 0;  // n when planned; later appends go after the tail
  std::size_t head_end = 0;
  std::size_t tail_begin = 0;
  std::vector<int64_t> middle_ids;
  // The latest previous summary (is_summary) inside the middle, if any: the
  // summary request updates it iteratively instead of starting afresh.
  std::optional<std::size_t> previous_summary_index;
  // Role of the summary message (SPEC §3): user when the kept head ends with an
  // assistant/tool row, is only the system prompt, or is empty; else assistant.
  msg_role summary_role = msg_role::user;
  // The summary role equals the role of the first kept tail row: the summary
  // text is prepended to that row instead of standing alone.
  bool merge_into_first_tail = false;
  std::optional<std::size_t> merge_target_index;  // set iff merge_into_first_tail
  std::vector<orphan_fix> orphan_fixes;
  int64_t head_tokens = 0;    // sums of token_estimate over each part
  int64_t middle_tokens = 0;
  int64_t tail_tokens = 0;

  bool nothing_to_compact() const { return outcome != split_outcome::compact; }
};

std::ostream& operator<<(std::ostream& os, const compaction_plan& p);

} // namespace mneme
