// A single row that cannot fit (SPEC §5.6, issue 25 item 8): a row whose token estimate
// exceeds compression.max_row_share of the model window (a 3.9 MB user turn, an
// assistant row with 10,000 tool calls) can never be sent, and compaction cannot shrink
// it when it sits in the protected head or tail, so every turn would exhaust and every
// reset would copy it again. Such a row is stored in full (the original is archived,
// compacted = 1, and stays searchable) and enters the live context only as a marker
// row with a head/tail excerpt, in the style of tool output eviction
// (policies/eviction_plan.hpp):
//   [MESSAGE TRUNCATED - 3,900,000 chars; too large for the context window, recall with search]
//   <first 2/3 of the excerpt>
//   ...[3,896,000 chars omitted]...
//   <last 1/3 of the excerpt>
// Pure, standard library only, any thread. The session actor plans before every turn's
// compaction checks and after every answer, and commits through the storage actor
// (policies/row_replacement.hpp says how the marker and the original are stored); the
// store's reset never copies a row over the same limit.
//
// A row is replaced when all of these hold:
//   1. it is stored (id != 0) and not itself a summary or replacement (is_summary);
//   2. its token estimate is above max_row_tokens(window, share);
//   3. the marker is smaller in tokens than the row.
// Any role and any place, the protected head and tail included: the rule exists for
// the rows compaction cannot touch. An assistant row loses its tool calls in the marker
// (ids and names alone can exceed the window); their results then answer no live call
// and are left out of every request (policies/tool_pairing.hpp repair), and a result
// appended later for one of them is refused like any orphan.
//
// Invariants of a plan: index order; every entry names an oversized row; the excerpt is
// at most oversized_excerpt_chars(limit) code points, cut on code point boundaries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "messages/transcript.hpp"
#include "policies/row_replacement.hpp"

namespace mneme {

inline constexpr double k_default_max_row_share = 0.5;
inline constexpr std::size_t k_oversized_excerpt_max_chars = 4000;

// The largest token estimate one live row may have: window × share, rounded down;
// 0 (no limit) when window <= 0 or share is not in (0, 1].
int64_t max_row_tokens(int64_t window, double share);

// True when a row of `tokens` tokens cannot fit under `limit` (0 = no limit).
bool row_cannot_fit(int64_t tokens, int64_t limit);

// The excerpt a marker may carry, in code points: min(4,000, limit / 2) (a CJK code
// point is one token, so the excerpt stays under half the limit). 0 when limit <= 0.
std::size_t oversized_excerpt_chars(int64_t limit);

// The marker content of `m` (see the header comment) with an excerpt of at most
// `excerpt_chars` code points of its content: two thirds from the head, one third from
// the tail; the tool call count is named when there are any.
std::string oversized_row_marker(const message& m, std::size_t excerpt_chars);

// True when `content` begins like an oversized-row marker.
bool is_oversized_row_marker(const std::string& content);

// The rows to replace, in index order (empty when nothing qualifies or limit <= 0).
// Entries for assistant rows with tool calls have drop_tool_calls set.
std::vector<row_replacement> plan_oversized_rows(const std::vector<message>& live, int64_t limit);

} // namespace mneme
