// What the PostgreSQL store writes beside each message for recall (schema v2,
// store/pg/pg_schema.cpp), computed in C++ at append time so that PostgreSQL indexes
// exactly mneme's own tokens (issue 26: Latin glued to CJK still splits, CJK bigrams
// match as on SQLite):
//   - search_words: a tsvector literal of the message's tokens from the CJK bigram
//     tokenizer (policies/cjk_bigram.hpp: folded words of other scripts, overlapping
//     CJK bigrams, a lone CJK character), with their positions (1-based token
//     order), each lexeme once with its positions ('a':1,4), in PostgreSQL's own
//     order (byte-wise lexemes, ascending positions, at most 256 positions per
//     lexeme and none above 16383: what tsvector keeps), so that tsvectorin parses
//     it without sorting (the largest share of the append's server time when each
//     token came apart). Given to PostgreSQL as `$n::tsvector`, so no PostgreSQL parser or
//     dictionary changes a token; queries use the `simple` configuration over the
//     same tokens. Tokens stop after pg_words_max_literal_bytes of literal (a
//     tsvector holds at most 1 MB): the rest of a huge row is found by substring.
//   - search_unicode61 (schema v3): the same for the word route, with the tokens of
//     SQLite's `unicode61 remove_diacritics 2` (store/word_tokens.hpp), so accents
//     and case fold exactly as in SQLite's fts_words ("cafe" finds "café"). Lexemes
//     longer than pg_max_lexeme_bytes (PostgreSQL's limit) are left out.
//   - search_text: the text as valid UTF-8 (each invalid byte -> U+FFFD, NUL -> a
//     space: PostgreSQL text can hold neither), for the pg_trgm substring index.
// Pure functions; any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace mneme {

inline constexpr std::size_t pg_words_max_literal_bytes = 512 * 1024;
inline constexpr std::size_t pg_max_lexeme_bytes = 2046;

std::string pg_tsvector_literal(std::string_view content);
std::string pg_unicode61_literal(std::string_view content);
std::string pg_search_text(std::string_view content);

} // namespace mneme
