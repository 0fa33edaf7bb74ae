// Recall's bounded plan for a full-text query that matches many rows (issue 46 target 4):
// search time must not grow with the number of hits. Today's plan scores every one of
// the user's matches (BM25) to return at most 10 conversations; for a term in a quarter
// of a user's 200,000 rows that is 50,000 scores. The bounded plan takes the user's
// newest matching rows first (the index read in descending row id, no ranking), stops
// once it holds `candidates` rows of at least the conversations still wanted, and ranks
// only those. These are the pure decisions of that plan: when it applies, when its scan
// stops, and how candidates become one best row per session. Used by
// store/sqlite/sqlite_recall.cpp; standard library only, any thread.
//
// Invariants the plan keeps (and the store relies on):
//   - A query whose matches the scan exhausts is ranked exactly as by the full plan
//     (every match of the user is a candidate).
//   - A scan that gives up (`max_examined` matches of any tenant looked at without
//     enough candidates) falls back to the full plan: the plan changes which rows are
//     ranked, never whether a user's match is found.
//   - Only queries with at least `frequent_matches` matches in the whole index use it,
//     so rare terms (every quality probe of the recall suites) rank as before.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mneme {

struct fts_candidate_params {
  // Matches in the whole index (all tenants) from which a query counts as frequent.
  int64_t frequent_matches = 1000;
  // The user's newest matching rows ranked for a frequent query (at least; more when
  // they hold fewer conversations than wanted).
  int64_t candidates = 100;
  // Matches of any tenant the newest-first scan looks at before it gives up and the
  // full plan runs: bounds the time a small or inactive user's search spends on it.
  int64_t max_examined = 4096;
};

// How one full-text route reads its matches.
enum class fts_route_plan : uint8_t {
  rank_all,     // every match of the user scored, best per session (today's plan)
  newest_first, // the bounded plan above
};

// `counted` is the number of matches in the whole index counted up to
// params.frequent_matches; `bounded_allowed` false keeps the full plan (the benchmark's
// baseline, and routes whose count is not taken).
fts_route_plan choose_fts_route_plan(int64_t counted, bool bounded_allowed,
                                     const fts_candidate_params& params);

enum class newest_scan_step : uint8_t {
  go_on,   // read the next (older) match
  enough,  // rank the candidates held
  give_up, // run the full plan instead
};

// After `examined` matches (any tenant) of which `candidates` were the user's visible
// rows, holding `conversations` conversations not found by an earlier route, of which
// `wanted` (>= 1; the caller bounds it by the user's sessions) are still to be found.
newest_scan_step next_newest_scan_step(int64_t examined, int64_t candidates,
                                       int64_t conversations, int64_t wanted,
                                       const fts_candidate_params& params);

// A candidate row: its id, its session and its BM25 score (lower is better).
struct scored_row {
  int64_t id = 0;
  std::string session_id;
  double score = 0;
};

// One row per session, its best (lowest score, then lowest id), sessions ordered by
// that row's score, then id: the order of the full plan's SQL over the same rows.
std::vector<scored_row> best_row_per_session(std::vector<scored_row> rows);

} // namespace mneme
