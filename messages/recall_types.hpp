// The recall vocabulary (SPEC §4): a search request and its anchored results, as
// the recall readers return them. Plain values plus their CAF inspect(); included by
// messages/mneme_types.hpp inside the recall section of the type-ID block, and by
// store/recall.hpp, which fills them. Owned by the recall module (issue 4).
// Safe to use from any thread; no shared state.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "caf/meta/type_name.hpp"

#include "messages/transcript.hpp"

namespace mneme {

inline constexpr int32_t recall_default_sessions = 3;   // SPEC §4
inline constexpr int32_t recall_max_sessions = 10;      // SPEC §4

// How a search ranks (issue 48): full text only, the query's vector only, or both
// fused by reciprocal rank (policies/rank_fusion.hpp). `automatic` is hybrid while
// embeddings are on, else fts.
enum class recall_mode : uint8_t { automatic, fts, vector, hybrid };

inline std::string_view to_string(recall_mode m) {
  switch (m) {
    case recall_mode::automatic: return "automatic";
    case recall_mode::fts: return "fts";
    case recall_mode::vector: return "vector";
    case recall_mode::hybrid: return "hybrid";
  }
  return "unknown";
}

// The mode named `text` exactly as to_string() spells it; nullopt for anything else.
inline std::optional<recall_mode> parse_recall_mode(std::string_view text) {
  for (auto m : {recall_mode::automatic, recall_mode::fts, recall_mode::vector,
                 recall_mode::hybrid})
    if (text == to_string(m))
      return m;
  return std::nullopt;
}

inline std::ostream& operator<<(std::ostream& os, recall_mode m) { return os << to_string(m); }

// Why a search that wanted the vector leg ran without it (none: it ran, or it was
// not wanted). The search then ran on full text only: never an error.
enum class vector_skip : uint8_t {
  none,
  embeddings_off,  // no `embeddings:` section (or no index in this process)
  provider_failed, // the embedder answered an error for the query (or a wrong size)
  timed_out,       // the embedder did not answer within the query timeout
};

inline std::string_view to_string(vector_skip s) {
  switch (s) {
    case vector_skip::none: return "none";
    case vector_skip::embeddings_off: return "embeddings_off";
    case vector_skip::provider_failed: return "provider_failed";
    case vector_skip::timed_out: return "timed_out";
  }
  return "unknown";
}

inline std::ostream& operator<<(std::ostream& os, vector_skip s) { return os << to_string(s); }

struct recall_request {
  std::string user_id;          // tenant scope; required (1..128 bytes)
  std::string query;            // any user text
  int32_t max_sessions = recall_default_sessions; // 1..recall_max_sessions (conversations)
  bool include_inactive = false;                  // also rolled-back rows
  recall_mode mode = recall_mode::automatic;
  // The query's unit vector (the recall pool fills it from the embedder); empty: the
  // search cannot run a vector leg and runs on full text (recall_result says why).
  std::vector<float> query_vector;
};

// What the hit row is (SPEC §4: each result says which kind it is).
enum class recall_hit_kind : uint8_t { message, summary, archived, archived_summary, rolled_back };

inline std::string_view to_string(recall_hit_kind k) {
  switch (k) {
    case recall_hit_kind::message: return "message";
    case recall_hit_kind::summary: return "summary";
    case recall_hit_kind::archived: return "archived";
    case recall_hit_kind::archived_summary: return "archived_summary";
    case recall_hit_kind::rolled_back: return "rolled_back";
  }
  return "unknown";
}

inline std::ostream& operator<<(std::ostream& os, recall_hit_kind k) { return os << to_string(k); }

inline recall_hit_kind kind_of(const message& m) {
  switch (m.state()) {
    case row_state::live:
      return m.is_summary ? recall_hit_kind::summary : recall_hit_kind::message;
    case row_state::archived:
      return m.is_summary ? recall_hit_kind::archived_summary : recall_hit_kind::archived;
    case row_state::rolled_back:
      return recall_hit_kind::rolled_back;
  }
  return recall_hit_kind::message;
}

struct recall_hit {
  message hit;                  // the matching row; hit.session_id holds it
  // The conversation the hit stands for: the root of its session's lineage
  // (policies/recall_grouping.hpp); hits are one per conversation.
  std::string conversation_id;
  recall_hit_kind kind = recall_hit_kind::message;
  // The index that found it: unicode61, cjk_bigram, trigram, substring_scan,
  // unindexed_tail; `vector` when only the vector leg found it (a conversation both
  // legs found keeps its full-text route and row).
  std::string route;
  // BM25 as FTS5 reports it (lower is better); 0 for a scan; for route `vector` the
  // cosine distance of the row to the query (0..2, lower is better).
  double score = 0;
  std::string snippet;          // a piece of the hit's text with >>>match<<< marks
  std::vector<message> window;  // up to 5 rows before, the hit, up to 5 after
  std::vector<message> first;   // up to 3 first non-summary rows not in the window
  std::vector<message> last;    // up to 3 last non-summary rows not in the window
};

struct recall_result {
  std::vector<recall_hit> hits; // one per conversation, best first
  std::vector<std::string> routes_tried;
  bool query_truncated = false; // the query was longer than the sanitizer's limits
  bool limit_clamped = false;   // the caller asked for more than recall_max_sessions
  recall_mode mode = recall_mode::fts;        // what ran: fts, vector or hybrid
  vector_skip vector_skipped = vector_skip::none; // why a wanted vector leg did not run
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, recall_request& x) {
  return f(caf::meta::type_name("mneme::recall_request"), x.user_id, x.query, x.max_sessions,
           x.include_inactive, x.mode, x.query_vector);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, recall_hit& x) {
  return f(caf::meta::type_name("mneme::recall_hit"), x.hit, x.conversation_id, x.kind,
           x.route, x.score, x.snippet, x.window, x.first, x.last);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, recall_result& x) {
  return f(caf::meta::type_name("mneme::recall_result"), x.hits, x.routes_tried,
           x.query_truncated, x.limit_clamped, x.mode, x.vector_skipped);
}

} // namespace mneme
