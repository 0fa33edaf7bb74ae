// Cross-session recall on SQLite (store/recall.hpp states what every backend shares)
// over a read-only connection: the full-text indexes of schema versions 3-5
// (fts_words = unicode61, fts_cjk = CJK bigram, fts_trigram = trigram), then a bounded
// substring scan; BM25 ranks; every statement is a cached prepared statement.
//
// Decisions particular to SQLite:
//   - Ranking: BM25 (FTS5's bm25() with default weights, lower is better) is
//     computed only for the user's own visible rows: the tenant filter runs on
//     the FTS5 scan before any score is computed (a join per match when the index
//     has fewer than fts_member_filter_matches matches, else and always on the
//     trigram route a membership test against the user's row ids), then one row
//     per session (its best) is kept in SQL, and snippets are computed only for the
//     returned rows. Equal scores order by row id.
//   - Frequent queries (issue 46; policies/fts_candidates.hpp): on the unicode61
//     and CJK routes a query with at least 1,000 matches in the index ranks only
//     the user's newest matching rows (at least 100, read newest first within the
//     user's row-id span, more when they hold fewer conversations than wanted, at
//     most one per session of the user), so
//     its time does not grow with its hits; a user whose newest matches are not
//     among the 4,096 newest matches of the span gets the full plan. Rare queries
//     (under 1,000 matches) and the trigram route rank every match as before.
//   - Asynchronous indexing (schemas v5, v7): rows above fts_state's lowest
//     watermark (indexed_through) are missing from at least one index (an index
//     ahead of it may find them; the session is counted once). After the FTS
//     routes, when sessions are still missing, the search scans those rows (the newest tail_scan_rows of the
//     user, same snapshot) with the substring matcher: every positive clause
//     present, no NOT clause, ASCII case-insensitive. Its hits rank after the
//     FTS hits (newest first, score 0), route "unindexed_tail". So an
//     acknowledged append is findable before the indexer reaches it.
//
// Thread: the thread that owns `db` (one detached recall reader actor).
#pragma once

#include <cstdint>
#include <string_view>

#include "caf/expected.hpp"

#include "messages/recall_types.hpp"
#include "store/recall.hpp"

namespace mneme {

class db_connection;
class vector_index;

// A full-text route with at least this many matches in the whole index (all
// tenants) filters them by a list of the user's row ids instead of joining each
// match to its session (same result, see sqlite_recall.cpp); only the cost differs, and
// this count is about where the two break even (figures:
// docs/benchmarks.md#recall-shapes).
inline constexpr int64_t fts_member_filter_matches = 1000;
// Rows above the index watermark that one search examines (newest first):
// tail_scan_rows (store/recall.hpp). The storage actor keeps the backlog near zero
// while idle; see store/sqlite/fts_indexer.hpp.

// How a full-text route reads a frequent query (policies/fts_candidates.hpp):
// newest_first ranks the user's newest matching rows only (the product's plan);
// rank_all scores every match of the user (the plan before issue 46, kept for
// `mneme-bench recall --plan rank_all`, the baseline of the same run).
enum class frequent_term_plan : uint8_t { newest_first, rank_all };

// Runs one search: its full-text leg, and with `index` its vector leg
// (store/vector_recall.hpp decides which run and merges them). Errors: bad_request
// for an empty or oversized user id or max_sessions outside 1..10; storage_* for
// SQLite failures. A query that sanitizes to nothing (garbage, only operators, only
// NOT terms) is no error: its full-text leg finds nothing.
// REQUIRES: db is at schema version >= 5.
caf::expected<recall_result> recall_search(
  db_connection& db, const recall_request& req,
  frequent_term_plan plan = frequent_term_plan::newest_first,
  const vector_index* index = nullptr);

} // namespace mneme
