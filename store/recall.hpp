// Cross-session recall (SPEC §4), what every backend's search shares: a sanitized query
// (policies/fts_query.hpp) routed through full-text indexes, then a bounded substring
// scan; the best hit per conversation (a session and the child and reset sessions
// descending from it, policies/recall_grouping.hpp); for each hit a highlighted
// snippet, the hit ± 5 messages of its session and the session's bookends. No LLM, no
// writes. The searches: store/sqlite/sqlite_recall.hpp (FTS5) and
// store/pg/pg_recall.hpp (PostgreSQL), each a recall_source (store/message_store.hpp).
//
// Decisions where the SPEC is silent, on every backend:
//   - Routing fills: the full-text routes of plan_routes() run in order until
//     `max_sessions` distinct conversations are found (a route's hits rank after the
//     previous route's); the substring scan runs only when no full-text route found
//     anything (it is the expensive last resort) and examines the newest
//     `substring_scan_rows` rows of the user (case-insensitive for ASCII, byte-exact
//     otherwise).
//   - Grouping: one hit per conversation, its best; max_sessions counts
//     conversations. The window and bookends are those of the session holding the
//     hit.
//   - Visibility: live and archived rows (summaries included) always; rolled-back
//     rows only with include_inactive. The same rule chooses the hits, the window
//     and the bookends; only the user's own rows are ever scored or returned.
//   - Order inside a session: position (a summary sits where the first row it
//     archived was), then id.
//   - Unindexed tail: rows not yet in a backend's indexes are scanned (newest
//     tail_scan_rows of the user, the substring matcher's rules) after the full-text
//     routes and before the last-resort scan, so an acknowledged row is findable at
//     once; those hits rank after the full-text hits, newest first, score 0.
//   - Bookends skip summary messages and every row already in the window, so a
//     hit carries at most 11 + 3 + 3 = 17 messages and never one twice.
// Pure declarations and one pure check; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "caf/error.hpp"

#include "messages/recall_types.hpp"
#include "policies/fts_query.hpp"

namespace mneme {

inline constexpr int32_t recall_window_radius = 5;      // hit ± 5 (SPEC §4)
inline constexpr int32_t recall_bookend_count = 3;      // first 3 and last 3 (SPEC §4)
inline constexpr int32_t recall_max_messages_per_hit = 17;
inline constexpr int64_t substring_scan_rows = 20000;
// A backend that indexes behind its appends (SQLite's FTS5 indexer, PostgreSQL's
// recall columns) scans the rows its indexes lack after the full-text routes: at most
// this many of the user's, newest first. Its hits carry the route below.
inline constexpr int64_t tail_scan_rows = 20000;
inline constexpr std::string_view unindexed_tail_route = "unindexed_tail";

inline constexpr std::size_t recall_max_user_id_bytes = 128;

// One hit of a search before its anchored view is read (every backend's).
struct recall_candidate {
  int64_t id = 0;
  std::string session_id;
  std::string conversation_id;
  double score = 0;
  std::string snippet;
  recall_route route = recall_route::unicode61;
  bool from_tail = false;   // found by the unindexed tail scan (route unindexed_tail_route)
  bool from_vector = false; // found by the vector leg only (store/vector_recall.hpp)
};

// bad_request for an empty or oversized user id or max_sessions outside 1..10 (every
// backend checks a request with this before it searches).
caf::error check_recall_request(const recall_request& req);

} // namespace mneme
