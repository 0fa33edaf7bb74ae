// What a reset after compaction exhaustion copies into the new session (SPEC §5.3,
// §5.6): the head (a leading system row, the next head_count rows, and the tool rows
// directly after them, i.e. answers to calls made in the head) plus the latest summary
// after the head. A row that cannot fit (policies/oversized_row.hpp: above
// max_row_tokens) is never copied — copied, it would make the new session exhaust
// again, and every later turn reset again — and neither are the tool rows answering
// the calls of an assistant row left behind. Nothing is lost: the old session keeps
// every row. Pure, standard library only, any thread; the store's reset calls it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "messages/transcript.hpp"

namespace mneme {

// Indices into `live` (the old session's live context, in order) of the rows to copy,
// ascending. max_row_tokens <= 0: no size limit. REQUIRES: head_count >= 0.
std::vector<std::size_t> plan_reset_copy(const std::vector<message>& live, int head_count,
                                         int64_t max_row_tokens);

} // namespace mneme
