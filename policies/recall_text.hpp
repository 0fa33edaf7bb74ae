// What the recall backends share about a hit's text (SPEC §4), pure functions on
// any thread, standard library only. Used by store/sqlite/sqlite_recall.cpp (SQLite) and
// store/pg/pg_recall.cpp (PostgreSQL), so both mark matches, apply a query to a
// scanned row and rank in the same way where the engines allow it.
//
//   - Substring side (the scans, the trigram route): a query's terms as ASCII
//     case-insensitive substrings (as SQLite's LIKE), its snippet with the first
//     match marked.
//   - Token side (PostgreSQL's word and CJK routes): a parsed query rendered as a
//     tsquery literal over the route's own tokens (each term is a phrase of its
//     tokens, `prefix*` marks the last one, as FTS5 reads a quoted term), the
//     occurrences of each phrase in a row's tokens, FTS5's BM25 formula and an
//     FTS5-shaped snippet (at most 24 tokens, `…` where text was cut, each match
//     between >>> and <<<).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "policies/cjk_bigram.hpp"
#include "policies/fts_query.hpp"

namespace mneme {

inline constexpr std::string_view snippet_open = ">>>";
inline constexpr std::string_view snippet_close = "<<<";
inline constexpr std::size_t snippet_max_tokens = 24;     // FTS5 snippet(..., 24)
inline constexpr std::size_t scan_snippet_context = 80;   // bytes each side of a scan match

// --- substring side
std::string ascii_lower(std::string_view s);
// Whether the row (already ascii_lower'ed) satisfies every clause: each positive
// clause has a term inside it, no NOT clause has. False without a positive clause.
bool text_matches_query(const std::string& lower, const parsed_query& q);
// `text` around the first match of any positive term, the match marked; "" if none.
std::string scan_snippet(std::string_view text, const std::string& lower, const parsed_query& q);

// --- token side
struct match_phrase {
  std::vector<std::string> tokens; // non-empty
  bool prefix = false;             // the last token matches any token it begins
};

struct token_query {
  std::string tsquery;               // "" when nothing can match
  std::vector<match_phrase> phrases; // the positive clauses' phrases, for ranking/snippets
};

using term_tokenizer = std::function<std::vector<std::string>(std::string_view)>;

// The tsquery literal of `q` over the tokens `tokenize` gives each term:
// alternatives `|`, clauses `&`, NOT clauses `& !(...)`, a phrase's tokens `<->`,
// a prefix `:*`. Every lexeme is quoted (quote and backslash escaped), so any user
// text is a valid literal. A term without tokens matches nothing (a positive clause
// left without alternatives makes the whole query match nothing).
token_query to_tsquery(const parsed_query& q, const term_tokenizer& tokenize);

// Occurrences of each phrase in `doc` (a row's tokens in order), index by index.
std::vector<int64_t> phrase_hits(const std::vector<bigram_token>& doc,
                                 const std::vector<match_phrase>& phrases);

// FTS5's bm25() (k1 = 1.2, b = 0.75, lower is better) with every phrase weighing 1
// (no inverse document frequency: see store/pg/pg_recall.hpp).
// REQUIRES: avg_tokens > 0.
double bm25_without_idf(const std::vector<int64_t>& hits, int64_t doc_tokens, double avg_tokens);

// The FTS5-shaped snippet of `text` whose tokens are `doc`: the window of at most
// snippet_max_tokens tokens holding the most distinct phrases (then the most hits,
// then the earliest), centred on its matches.
std::string token_snippet(std::string_view text, const std::vector<bigram_token>& doc,
                          const std::vector<match_phrase>& phrases);

} // namespace mneme
