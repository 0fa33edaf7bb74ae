// The head / middle / tail split of a compaction (SPEC §3). Pure functions over
// the live transcript (in order; element 0 is the system prompt when its role
// is system). Each row's token_estimate must already be filled by the caller;
// no estimator is called here. Standard library only, no clock, no I/O, any
// thread. Called by the session actor (whole and local compaction) and by the
// CLI; the resulting plan is applied with apply_plan (policies/split_apply.hpp).
//
// How the cuts are placed, in this order:
//   1. head_end = (1 if live[0] is system) + protect_first_n, capped at n.
//      If that cut would split a tool group the head grows forward until the
//      group is whole: head messages are protected, so they are never pulled
//      into the summary.
//   2. tail_begin, count mode: n - protect_last_n.
//      tail_begin, tokens mode: walk back from the end taking every row while
//      fewer than k_tail_floor_messages (3) are taken, then while fewer than
//      k_tail_max_messages (8) are taken and the running token sum stays
//      within tail_token_budget(window); stop at the first row that does not
//      fit. The cap of 8 bounds what the budget selects; steps 3 and 4 may
//      exceed it.
//   3. Both modes: while the tail holds fewer than min_tail_user_messages real
//      user messages and a real user message exists in [head_end, tail_begin),
//      tail_begin moves back to the latest such message. When there is none
//      after the head, the tail stays as it is (the latest user intent is then
//      in the protected head, which is kept anyway).
//   3b. Both modes: the last visible reply — the last assistant row with text
//      content (not a summary) after the last real user message, or in the whole
//      transcript when there is no user message — joins the tail when it lies
//      after the head: tail_begin moves back to it. After a long tool loop the
//      tail could otherwise hold only tool traffic while the answer the user
//      last read is summarized away. With min_tail_user_messages >= 1 and the
//      user message after the head this is already so; the rule matters when
//      the last user message sits in the protected head (or the user rule is
//      off). Like step 3 it may leave the middle empty.
//   3c. Both modes: the turn in progress stays whole. When no final reply (an
//      assistant row with text and no tool_calls, not a summary) follows the last
//      real user message, that message — the one that started the current tool
//      loop, or the turn now being answered — joins the tail if it lies after the
//      head, with every row after it (the loop's calls and results). A compaction
//      between two rounds of a tool loop (T1 before the next model call, T2 after an
//      answer with calls) therefore never summarizes the request the model is
//      working on, whatever min_tail_user_messages or tail_mode say. When that
//      message sits in the protected head, the head keeps it and the loop's earlier
//      rounds after the head may be summarized (groups whole), so a long agent task
//      that began the session can still be compacted.
//   4. If tail_begin would split a tool group, it moves back (the tail grows)
//      until the group is whole: the recent context stays verbatim.
//   5. tail_begin is never below head_end; middle = [head_end, tail_begin).
//
// Orphans already present in the kept context (never created by the cuts):
//   - a kept tool row answering no kept call is dropped from the live context
//     and archived with the middle (active=0, compacted=1; still searchable);
//   - a kept assistant call with no answer gets a synthetic tool row
//     "[no result recorded]" right after the assistant's run of tool rows —
//     except the calls of the pending group at the very end of the
//     transcript, whose tools may still be running.
// Orphan fixes, the summary role and the merge are only planned when the
// middle is non-empty.
//
// Cost: O(n) plus one hash lookup per call id; about 1.5 ms for 5,000 rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "messages/transcript.hpp"
#include "policies/compression_params.hpp"
#include "policies/split_plan.hpp"

namespace mneme {

// tail_mode: tokens (SPEC §3, Hermes' lean mode).
inline constexpr int64_t k_tail_budget_min_tokens = 10000;
inline constexpr int64_t k_tail_budget_max_tokens = 25000;
inline constexpr int64_t k_tail_budget_per_mille_of_window = 25;   // 2.5%
inline constexpr int64_t k_tail_budget_max_percent_of_window = 20; // <= 20%
inline constexpr std::size_t k_tail_floor_messages = 3;
inline constexpr std::size_t k_tail_max_messages = 8;

// min(clamp(2.5% of window, 10,000, 25,000), 20% of window); 0 for a window <= 0.
int64_t tail_token_budget(int64_t context_window);

// Plans a whole-session compaction. `context_window` is the model's context
// length in tokens (only tail_mode: tokens uses it).
compaction_plan plan_compaction(const std::vector<message>& live,
                                const compression_params& params, int64_t context_window);

// Plans a local compaction (T13): the window [center - radius, center + radius]
// clipped to the part between the protected head and tail that plan_compaction
// would keep, then widened outwards until no tool group is split (the
// protections bound the widening, so they are never touched). The center
// inside a protection, or past the end, gives an outcome that says so.
compaction_plan plan_local_compaction(const std::vector<message>& live,
                                      std::size_t center_index, std::size_t radius,
                                      const compression_params& params,
                                      int64_t context_window);

} // namespace mneme
