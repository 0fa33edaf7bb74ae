// Proactive pruning (SPEC §6): shrinking the live context without an LLM when
// the main compaction may not run (cooldown / anti-thrash lock) but the session
// is over its threshold, or whenever compression.proactive_prune_tokens (> 0)
// is exceeded. Pure, standard library only, no clock, any thread; called by the
// session actor, whose commit goes through the storage actor; applied with
// apply_replacements (policies/row_replacement.hpp, which says how a replaced
// row and its archived original are stored).
//
// When it runs (proactive_prune_due):
//   (main_compaction_locked and tokens_now >= threshold)
//   or (proactive_prune_tokens > 0 and tokens_now > proactive_prune_tokens).
//
// What it replaces, in this order, only among CANDIDATES: tool rows (role
// tool) strictly between the protected head and the protected tail that
// plan_compaction (policies/split.hpp) would keep, stored (id != 0) and not
// themselves a replacement or summary (is_summary == false):
//   1. dedupe: a candidate whose content equals the content of a LATER live
//      tool row (anywhere, the tail included) becomes
//        [DUPLICATE OUTPUT - N chars; identical to the later result of call C (row R)]
//      (N = code points of the original; "(row R)" omitted when that row is
//      not stored yet). The latest copy is never deduped (rule 2 may shorten
//      it; its original stays findable by that row id).
//   2. large results: a remaining candidate longer than
//      proactive_prune_min_result_chars code points becomes
//        [PRUNED TOOL OUTPUT - NAME(ARGS) returned N chars; first line: "LINE"; recall with search]
//      NAME from the row's tool_name (else the call's name), ARGS an excerpt of
//      the answering call's arguments (<= 120 chars), LINE the first non-blank
//      line (<= 160 chars).
//   A replacement is planned only if it reclaims tokens (> 0).
// Commit rule: the plan prunes only if the reclaim sum reaches
// proactive_prune_min_reclaim_tokens; otherwise it skips with the reason and
// lists no replacement (tokens_reclaimable still says what was possible).
//
// Invariants of a plan with outcome prune (pinned by tests/prune_plan_test.cpp):
//   1. every replacement names a tool row in [head_end, tail_begin);
//   2. no user, assistant or system row, and no head or tail row, is replaced;
//   3. replacements are in index order, one per row, each reclaiming > 0;
//   4. tokens_reclaimed == sum of the replacements' reclaims
//      >= proactive_prune_min_reclaim_tokens.
// Pairing is preserved because a replacement keeps role and tool_call_id.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string_view>
#include <vector>

#include "messages/transcript.hpp"
#include "policies/compression_params.hpp"
#include "policies/row_replacement.hpp"

namespace mneme {

inline constexpr std::size_t k_prune_arguments_excerpt_chars = 120;
inline constexpr std::size_t k_prune_first_line_chars = 160;

enum class prune_outcome : uint8_t {
  prune,               // commit the replacements
  not_due,             // neither run condition holds
  nothing_to_prune,    // due, but no candidate is a duplicate or large
  below_min_reclaim,   // candidates found, but they reclaim too little
};

std::string_view to_string(prune_outcome o);
std::ostream& operator<<(std::ostream& os, prune_outcome o);

struct prune_plan {
  prune_outcome outcome = prune_outcome::not_due;
  std::vector<row_replacement> replacements;  // empty unless outcome == prune
  int64_t tokens_reclaimable = 0;  // sum over everything found (also when skipping)
  int64_t tokens_reclaimed = 0;    // == tokens_reclaimable when pruning, else 0
  std::size_t deduplicated = 0;    // duplicates found (replaced only when pruning)
  std::size_t summarized = 0;      // large results found (replaced only when pruning)
  std::size_t head_end = 0;        // the protected cuts the plan respected
  std::size_t tail_begin = 0;
};

std::ostream& operator<<(std::ostream& os, const prune_plan& p);

bool proactive_prune_due(const compression_params& params, bool main_compaction_locked,
                         int64_t tokens_now, int64_t threshold);

// `context_window` only matters for tail_mode: tokens (as in plan_compaction).
prune_plan plan_proactive_prune(const std::vector<message>& live,
                                const compression_params& params, int64_t context_window,
                                bool main_compaction_locked, int64_t tokens_now,
                                int64_t threshold);

// The two replacement texts, exposed for tests and for the README.
std::string duplicate_marker(std::size_t original_chars, std::string_view later_call_id,
                             int64_t later_row_id);
std::string pruned_output_line(std::string_view tool_name, std::string_view arguments,
                               std::size_t original_chars, std::string_view content);

} // namespace mneme
