// The recall vocabulary (SPEC §4): a search request and its anchored results, as
// the recall readers return them. Plain values plus their CAF inspect(); included by
// messages/mneme_types.hpp inside the recall section of the type-ID block, and by
// store/recall.hpp, which fills them. Owned by the recall module (issue 4).
// Safe to use from any thread; no shared state.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "caf/meta/type_name.hpp"

#include "messages/transcript.hpp"

namespace mneme {

inline constexpr int32_t recall_default_sessions = 3;   // SPEC §4
inline constexpr int32_t recall_max_sessions = 10;      // SPEC §4

struct recall_request {
  std::string user_id;          // tenant scope; required (1..128 bytes)
  std::string query;            // any user text
  int32_t max_sessions = recall_default_sessions; // 1..recall_max_sessions (conversations)
  bool include_inactive = false;                  // also rolled-back rows
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
  std::string route;            // the index that found it: unicode61, cjk_bigram, trigram, substring_scan
  double score = 0;             // BM25 as FTS5 reports it (lower is better); 0 for a scan
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
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, recall_request& x) {
  return f(caf::meta::type_name("mneme::recall_request"), x.user_id, x.query, x.max_sessions,
           x.include_inactive);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, recall_hit& x) {
  return f(caf::meta::type_name("mneme::recall_hit"), x.hit, x.conversation_id, x.kind,
           x.route, x.score, x.snippet, x.window, x.first, x.last);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, recall_result& x) {
  return f(caf::meta::type_name("mneme::recall_result"), x.hits, x.routes_tried,
           x.query_truncated, x.limit_clamped);
}

} // namespace mneme
