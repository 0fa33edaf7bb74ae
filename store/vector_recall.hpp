// Semantic recall (issue 48), the part every backend's search shares: which legs a
// request runs (full text, vector, both), the vector leg (the user's nearest rows in
// the process's vector index, checked against the database, one per conversation)
// and the merge of the legs (policies/rank_fusion.hpp for hybrid). A backend supplies
// two lookups inside its search snapshot and keeps its own full-text leg and anchored
// view (store/sqlite/sqlite_recall.cpp, store/pg/pg_recall.cpp).
//
// Decisions, on every backend:
//   - Legs: mode fts runs full text only; vector and hybrid (and automatic, which is
//     hybrid then) run the vector leg only when the request carries a query vector of
//     the index's dimensions and the source has an index; otherwise the search runs
//     on full text and recall_result::vector_skipped says why (the recall pool
//     replaces embeddings_off by the embedder's failure when it had one).
//   - Each leg of a hybrid search brings fusion_leg_conversations(max_sessions)
//     conversations; the vector leg asks the index for vector_leg_rows() rows.
//   - A vector row counts only when the database has it, it belongs to the searching
//     user (checked again: the index is per user) and is visible (live and archived
//     always, rolled back only with include_inactive): store/recall.hpp's rules.
//   - A conversation both legs found keeps its full-text row, route, score and
//     snippet; one only the vector leg found gets route `vector`, its cosine distance
//     as score and the start of its text as snippet (vector_snippet_bytes, cut on a
//     UTF-8 boundary, "…" when cut).
// Thread: the caller's (a recall reader); the index is thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "caf/expected.hpp"

#include "messages/recall_types.hpp"
#include "store/recall.hpp"
#include "store/vector_index.hpp"

namespace mneme {

// recall_hit::route of a hit only the vector leg found.
inline constexpr std::string_view vector_route = "vector";
inline constexpr std::size_t vector_snippet_bytes = 200;

struct recall_legs {
  bool full_text = true;
  bool vector = false;
  std::size_t full_text_conversations = 0; // what the full-text leg collects
  std::size_t vector_conversations = 0;    // what the vector leg collects
};

// The legs `req` runs on a source with `index` (null: no embeddings); sets
// result.mode and result.vector_skipped.
recall_legs plan_recall_legs(const recall_request& req, const vector_index* index,
                             recall_result& result);

// A row the index named, as the database has it.
struct vector_row {
  int64_t id = 0;
  std::string session_id;
  std::string user_id;
  bool active = false;
  bool compacted = false;
  std::string text;
};

// The backend's lookups: the rows of these ids (any order; missing ids left out), and
// the conversation (lineage root) of a session.
using vector_rows_reader =
  std::function<caf::expected<std::vector<vector_row>>(const std::vector<int64_t>& ids)>;
using conversation_reader =
  std::function<caf::expected<std::string>(const std::string& session_id)>;

// The vector leg: up to `conversations` candidates, one per conversation (its nearest
// visible row), nearest first.
caf::expected<std::vector<recall_candidate>>
vector_leg(const vector_index& index, const recall_request& req, std::size_t conversations,
           const vector_rows_reader& rows_of, const conversation_reader& conversation_of);

// The hits of the search, best first, at most req.max_sessions: the full-text leg's,
// the vector leg's, or both fused.
std::vector<recall_candidate> merge_recall_legs(std::vector<recall_candidate> full_text,
                                                std::vector<recall_candidate> vector,
                                                const recall_legs& legs,
                                                std::size_t max_sessions);

// The start of `text` as a vector hit's snippet.
std::string vector_snippet(std::string_view text);

} // namespace mneme
