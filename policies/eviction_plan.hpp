// Tool output eviction (SPEC §6, seed 004 stage 1): once the model has answered
// after a large tool output, that output has done its work and its live copy
// becomes the one-line marker
//   [OUTPUT TRUNCATED - N chars; recall with search]
// (N = the original's length in code points, plain digits), while the original
// row stays in the database, archived and searchable. Pure, standard library
// only, any thread. The session actor plans after each assistant answer and
// commits through the storage actor; apply with apply_replacements
// (policies/row_replacement.hpp says how the replaced row and its archived
// original are stored).
//
// A row is evicted when all of these hold:
//   1. it is a tool row, stored (id != 0), not itself a replacement/summary;
//   2. its content is longer than `min_chars` code points (min_chars <= 0 turns
//      eviction off);
//   3. an assistant row exists after it (the model has answered past it;
//      an assistant's next tool call counts as having read the output);
//   4. the marker is shorter in tokens than the original (always true above
//      k_eviction_min_chars_floor).
// No protected head or tail: eviction is the stage-1 "single-turn" dehydration
// and applies as soon as the output was read. Pairing holds (role and
// tool_call_id kept).
//
// Configuration (proposed, not yet in compression_params):
//   compression.tool_output_eviction_chars, default 16,000, range 0 (off) or
//   256..1,000,000,000. 16,000 chars (about 4,000 tokens) is twice
//   proactive_prune_min_result_chars: pruning shortens 8-16K outputs only under
//   pressure, eviction removes the really large dumps unconditionally.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "messages/transcript.hpp"
#include "policies/row_replacement.hpp"

namespace mneme {

inline constexpr int64_t k_default_tool_output_eviction_chars = 16000;
inline constexpr int64_t k_eviction_min_chars_floor = 256;

// "[OUTPUT TRUNCATED - 12345 chars; recall with search]"
std::string eviction_marker(std::size_t original_chars);

// True when `content` is exactly an eviction marker.
bool is_eviction_marker(const std::string& content);

// The rows to replace, in index order (empty when nothing qualifies).
std::vector<row_replacement> plan_tool_output_eviction(const std::vector<message>& live,
                                                       int64_t min_chars);

// The last step before compaction exhaustion when the model refused a request as too
// large (T6-T9) and compaction could not shrink it, e.g. one huge tool output in the
// protected head or tail: rules 1, 2 and 4 without rule 3, so outputs the model has not
// answered yet are evicted too (it cannot read them: the request carrying them is
// refused). Without this an output in the head comes back with every reset and every
// turn of the session exhausts again. In index order; empty when nothing qualifies.
std::vector<row_replacement> plan_refused_output_eviction(const std::vector<message>& live,
                                                          int64_t min_chars);

} // namespace mneme
