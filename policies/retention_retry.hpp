// The retry below compression.min_retention (issue 45): when a summarizer's summary
// kept too few of the identifiers of the rows it replaces
// (policies/identifier_retention.hpp), the summarizer is asked once more with the
// missing identifiers listed; both attempts are logged (the first with outcome
// `retried`). This unit decides whether to ask again and writes the list.
//
// Pure functions; no clock, no I/O; any thread. Called by the session actor
// (actors/session/session_compaction.cpp) when a summary arrives.
//
// decide_retention_retry, in order:
//   1. min_retention <= 0 (off) .................................. accept
//   2. not the summarizer's summary (fallback, external endpoint) . accept
//      (the fallback is what it is; an endpoint's compaction takes no instructions)
//   3. attempt >= 2 (the retry already ran) ....................... accept
//   4. identifiers_in < min_identifiers_to_judge .................. accept
//      (with 1-4 identifiers one miss is 20-100 %: too few to judge a summary)
//   5. kept / in >= min_retention ................................. accept
//   6. otherwise .................................................. retry
// Invariant: at most one retry per compaction (rule 3), so a compaction asks the
// summarizer at most twice and the second answer is committed whatever it keeps
// (it still passes the size guard like any other).
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "policies/identifier_retention.hpp"

namespace mneme {

inline constexpr int64_t min_identifiers_to_judge = 5;
// The list in the retry prompt: at most this many identifiers and bytes (the first
// missing ones, in order of appearance).
inline constexpr std::size_t retry_list_max_items = 100;
inline constexpr std::size_t retry_list_max_bytes = 4000;

enum class retention_action { accept, retry };

const char* to_string(retention_action a);
std::ostream& operator<<(std::ostream& os, retention_action a);

struct retention_retry_inputs {
  double min_retention = 0;     // compression.min_retention, 0 = off
  bool from_summarizer = false; // the summary came from the summarizer pool
  int32_t attempt = 1;          // 1 for the first answer, 2 for the retry's
  int64_t identifiers_in = 0;
  int64_t identifiers_kept = 0;
};

retention_action decide_retention_retry(const retention_retry_inputs& in);

// The identifiers the retry asks the summarizer to keep, one per line ("- text"),
// the first retry_list_max_items that fit in retry_list_max_bytes; "" when none.
std::string missing_identifiers_list(const std::vector<identifier>& missing);

} // namespace mneme
