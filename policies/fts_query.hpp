// Recall query sanitizing and routing (SPEC §4), pure. Any user text becomes a
// parsed_query that renders to an FTS5 MATCH expression which can never be a syntax
// error and never injects: every term is emitted as a double-quoted FTS5 string
// (inner quotes doubled), and the only operators in the output are the ones this
// unit writes itself. Called by the recall readers on any thread; no state.
//
// Accepted syntax: words (implicit AND), `OR` between alternatives, `NOT term`,
// `"phrases"`, `prefix*`. `AND` is accepted as a no-op. Everything else — unbalanced
// quotes (the rest of the text becomes the phrase), `:`, `(`, `)`, `^`, `-`, `+`, `{`,
// SQL text, invalid UTF-8 (dropped), control characters — is plain text inside a
// quoted term, which the index's own tokenizer then splits or ignores.
//
// Meaning: `a OR b c` is (a OR b) AND c — OR binds alternatives tighter than the
// implicit AND, as in web search. A query whose terms are all negated finds nothing
// (FTS5 cannot express "everything except"). Limits: the first `max_query_bytes` of
// the input, at most `max_terms` terms, each cut to `max_term_bytes`.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace mneme {

inline constexpr std::size_t max_query_bytes = 1024;
inline constexpr std::size_t max_terms = 32;
inline constexpr std::size_t max_term_bytes = 256;

struct query_term {
  std::string text;        // valid UTF-8, no control characters, non-empty
  bool prefix = false;     // `word*`
  bool phrase = false;     // came from "quotes"
  std::size_t chars = 0;   // code points of its indexable characters
  bool has_cjk = false;
};

// One AND-ed clause: any of its alternatives matches (OR); `negated` = NOT clause.
struct query_clause {
  std::vector<query_term> any_of;
  bool negated = false;
};

struct parsed_query {
  std::vector<query_clause> clauses;
  bool truncated = false;  // the input was longer than the limits allowed

  bool has_positive_clause() const;
  bool has_cjk() const;
  // Every term of every positive clause has at least `n` indexable characters.
  bool all_terms_at_least(std::size_t n) const;
};

parsed_query parse_user_query(std::string_view raw);

enum class match_dialect {
  word,      // unicode61 and cjk bigram: prefix* kept
  trigram,   // trigram: prefix marks dropped (matching is by substring anyway)
};

// The FTS5 MATCH expression, or "" when the query has no positive clause.
std::string to_fts5_match(const parsed_query& q, match_dialect dialect);

// The indexes tried, in order, until one returns hits (SPEC §4 route):
// unicode61 → cjk bigram (first when the query has CJK) → trigram (only when every
// positive term has ≥ 3 characters) → bounded substring scan.
enum class recall_route { unicode61, cjk_bigram, trigram, substring_scan };

std::string_view to_string(recall_route r);

std::vector<recall_route> plan_routes(const parsed_query& q);

// Escapes `term` for `LIKE ? ESCAPE '\'` as `%term%` (the substring scan).
std::string like_pattern(std::string_view term);

} // namespace mneme
