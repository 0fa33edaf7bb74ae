// Cross-session recall over a read-only connection (SPEC §4): routes a sanitized
// query through the full-text indexes of schema versions 3-5 (fts_words = unicode61,
// fts_cjk = CJK bigram, fts_trigram = trigram), then a bounded substring scan;
// ranks by BM25; keeps the best hit per conversation (a session and the child and
// reset sessions descending from it, policies/recall_grouping.hpp); and returns, for each hit, a
// highlighted snippet, the hit ± 5 messages of its session and the session's
// bookends. No LLM, no writes; every statement is a cached prepared statement.
//
// Decisions where the SPEC is silent:
//   - Ranking: BM25 (FTS5's bm25() with default weights, lower is better) is
//     computed only for the user's own visible rows: the tenant filter runs on
//     the FTS5 scan before any score is computed (a join per match when the index
//     has fewer than fts_member_filter_matches matches, else and always on the
//     trigram route a membership test against the user's row ids), then one row per session (its best) is kept in
//     SQL, and snippets are computed only for the returned rows. Equal scores
//     order by row id.
//   - Routing fills: the FTS routes of plan_routes() run in order until
//     `max_sessions` distinct sessions are found (a route's hits rank after the
//     previous route's); the substring scan runs only when no FTS route found
//     anything (it is the expensive last resort).
//   - Grouping: the SQL still keeps one row per session; the search then keeps
//     the first (best) row of each conversation, resolving each session's
//     lineage root once (one primary-key lookup per ancestor). max_sessions
//     counts conversations. The window and bookends are those of the session
//     holding the hit.
//   - Visibility: live and archived rows (summaries included) always; rolled-back
//     rows only with include_inactive. The same rule chooses the hits, the window
//     and the bookends.
//   - Order inside a session: position (a summary sits where the first row it
//     archived was), then id.
//   - Bookends skip summary messages and every row already in the window, so a
//     hit carries at most 11 + 3 + 3 = 17 messages and never one twice.
//   - Asynchronous indexing (schemas v5, v7): rows above fts_state's lowest
//     watermark (indexed_through) are missing from at least one index (an index
//     ahead of it may find them; the session is counted once). After the FTS
//     routes, when sessions are still
//     missing, the search scans those rows (the newest tail_scan_rows of the
//     user, same snapshot) with the substring matcher: every positive clause
//     present, no NOT clause, ASCII case-insensitive. Its hits rank after the
//     FTS hits (newest first, score 0), route "unindexed_tail". So an
//     acknowledged append is findable before the indexer reaches it.
//   - The substring scan examines the newest `substring_scan_rows` rows of the
//     user (case-insensitive for ASCII, byte-exact otherwise).
//
// Thread: the thread that owns `db` (one detached recall reader actor).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "caf/expected.hpp"

#include "messages/recall_types.hpp"
#include "messages/transcript.hpp"
#include "policies/fts_query.hpp"
#include "policies/recall_text.hpp"

namespace mneme {

class db_connection;

inline constexpr int32_t recall_window_radius = 5;      // hit ± 5 (SPEC §4)
inline constexpr int32_t recall_bookend_count = 3;      // first 3 and last 3 (SPEC §4)
inline constexpr int32_t recall_max_messages_per_hit = 17;
inline constexpr int64_t substring_scan_rows = 20000;
// A full-text route with at least this many matches in the whole index (all
// tenants) filters them by a list of the user's row ids instead of joining each
// match to its session (same result, see recall.cpp); only the cost differs, and
// this count is about where the two break even (figures:
// docs/benchmarks.md#recall-shapes).
inline constexpr int64_t fts_member_filter_matches = 1000;
// Rows above the index watermark that one search examines (newest first). The
// storage actor keeps the backlog near zero while idle; see store/sqlite/fts_indexer.hpp.
inline constexpr int64_t tail_scan_rows = 20000;
// recall_hit::route of a hit found among the not yet indexed rows.
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
  bool from_tail = false; // found by SQLite's unindexed tail scan
};

// bad_request for an empty or oversized user id or max_sessions outside 1..10 (every
// backend checks a request with this before it searches).
caf::error check_recall_request(const recall_request& req);

// Runs one search. Errors: bad_request for an empty or oversized user id or
// max_sessions outside 1..10; storage_* for SQLite failures. A query that
// sanitizes to nothing (garbage, only operators, only NOT terms) is no error:
// it finds nothing.
// REQUIRES: db is at schema version >= 5.
caf::expected<recall_result> recall_search(db_connection& db, const recall_request& req);

} // namespace mneme
