// Rollback to a checkpoint (SPEC §6, seed 004 stage 3): which rows a
// `/rollback NAME` rolls back and what the restored live context is. Pure,
// standard library only, any thread. The session actor (or the CLI) plans with
// its live transcript and the checkpoint, the storage actor performs the flag
// changes in one transaction, and restore_live_context assembles the new
// in-memory transcript once the revived rows are read back.
//
// A checkpoint records the id of the session's last row when it was taken
// (every later row was appended after it: ids grow in append order) and the
// ids of the live context at that moment, in live order.
//
// Plan (plan_rollback):
//   1. every row of the session with id > last_message_id becomes rolled back
//      (active = 0, compacted = 0): later messages, later summaries and later
//      replacement rows alike, whether live or archived now. They leave default
//      search (SPEC §1). rolled_back_live_ids lists the live ones.
//   2. revived_ids: rows live at the checkpoint that are not live now (a later
//      compaction, prune, eviction or fold archived them): they become live
//      again (active = 1, compacted = 0). Taking a checkpoint before a later
//      compaction therefore brings the compacted originals back verbatim, and
//      the summary that replaced them is rolled back by rule 1.
//   3. re_archived_ids: rows live now, older than the checkpoint, that were
//      not live at it (an earlier rollback to an older checkpoint revived
//      them): they return to archived (active = 0, compacted = 1).
//   4. the restored live context is exactly the checkpoint's live ids, in
//      their order.
// Outcomes: nothing_to_roll_back when the live ids already equal the
// checkpoint's (then no row after the mark can be live or archived, since
// every later change leaves a later row live); invalid_checkpoint when the
// checkpoint lists id 0, a negative mark, a live id above the mark, or an id
// twice; pending_appends when a live row is not stored yet (id 0), because
// it would escape rule 1: the caller retries after the acknowledgement.
// Store note: sqlite_store::rollback_to_checkpoint applies rule 1 and revives
// rows archived by a later summary (archived_by > mark), which is rule 2 for
// every row a compaction archived; rules 2 for rows rolled back by an earlier
// rollback, and 3, are what this plan adds.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "messages/transcript.hpp"

namespace mneme {

struct rollback_checkpoint {
  std::string name;
  int64_t last_message_id = 0;    // the session's newest row id when taken (0: no rows yet)
  std::vector<int64_t> live_ids;  // the live context then, in live order
};

enum class rollback_outcome : uint8_t {
  rollback,
  nothing_to_roll_back,
  invalid_checkpoint,
  pending_appends,  // a live row has no id yet: retry once its append is acknowledged
};

std::string_view to_string(rollback_outcome o);
std::ostream& operator<<(std::ostream& os, rollback_outcome o);

struct rollback_plan {
  rollback_outcome outcome = rollback_outcome::nothing_to_roll_back;
  std::string detail;                         // why a checkpoint is invalid
  int64_t roll_back_after_id = 0;             // rule 1: every row with a larger id
  std::vector<int64_t> rolled_back_live_ids;  // rule 1, the live ones, in live order
  std::vector<int64_t> revived_ids;           // rule 2, in checkpoint order
  std::vector<int64_t> re_archived_ids;       // rule 3, in live order
  std::vector<int64_t> restored_live_ids;     // rule 4
};

std::ostream& operator<<(std::ostream& os, const rollback_plan& p);

rollback_plan plan_rollback(const std::vector<message>& live, const rollback_checkpoint& cp);

// The live context after the rollback: the rows of restored_live_ids, taken
// from `live` or from `revived_rows` (read back from the store, any order),
// each with active = 1, compacted = 0. nullopt when a row is missing from both.
std::optional<std::vector<message>> restore_live_context(const rollback_plan& plan,
                                                         const std::vector<message>& live,
                                                         const std::vector<message>& revived_rows);

} // namespace mneme
